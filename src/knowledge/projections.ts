/**
 * Public projections: what a released entity, inquiry or edition shows, pinned to a graph revision.
 * @remarks A projection only reads graph records that existed at its revision (ordinal at most the
 * revision's record count), so a later acceptance never changes a released projection. Projections
 * carry no private references (no spaceRef, proposalRef or person names).
 * @module
 */
import type { GraphRecord } from './records.ts';

/** The kinds of public artifact. */
export type ArtifactKind = 'entity' | 'inquiry' | 'edition';

/** A projection value and the text search and pages show for it. */
export interface Projection {
  value: Record<string, unknown>;
  title: string;
  snippet: string;
}

const snippetOf = (text: string) => (text.length > 280 ? `${text.slice(0, 279)}…` : text);

function refTo(records: ReadonlyMap<string, GraphRecord>, entityId: string) {
  const target = records.get(entityId);
  return { kind: 'entity', entityId, name: target ? String(target.body.name) : null };
}

/** The projection of Entity `entityId` over the given records (those of the pinned revision). */
export function entityProjection(all: readonly GraphRecord[], entityId: string, graphRevision: string): Projection | null {
  const byId = new Map(all.map((r) => [r.id, r]));
  const e = byId.get(entityId);
  if (!e || e.kind !== 'entity') return null;
  const evidenceOf = new Map<string, GraphRecord[]>();
  for (const r of all) if (r.kind === 'evidence') evidenceOf.set(String(r.body.statementId), [...(evidenceOf.get(String(r.body.statementId)) ?? []), r]);
  const statements = all
    .filter((r) => r.kind === 'statement' && r.body.subjectId === entityId)
    .map((s) => {
      const o = s.body.object as Record<string, unknown>;
      return {
        statementId: s.id,
        predicate: s.body.predicate,
        stance: s.body.stance,
        object: o.kind === 'entity' ? refTo(byId, String(o.entityId)) : o,
        evidence: (evidenceOf.get(s.id) ?? []).map((ev) => {
          const src = ev.body.source as Record<string, unknown>;
          return { evidenceId: ev.id, bearing: ev.body.bearing, selector: ev.body.selector, source: src.kind === 'entity' ? refTo(byId, String(src.entityId)) : src };
        }),
      };
    });
  const b = e.body;
  return {
    value: {
      v: 1, kind: 'entity', entityId, graphRevision, name: b.name, description: b.description, language: b.language,
      identifiers: b.identifiers, concepts: b.concepts, statements,
    },
    title: String(b.name),
    snippet: snippetOf(String(b.description ?? (b.concepts as string[]).join(', '))),
  };
}

/** The projection of Inquiry `inquiryId` over the given records. */
export function inquiryProjection(all: readonly GraphRecord[], inquiryId: string, graphRevision: string): Projection | null {
  const byId = new Map(all.map((r) => [r.id, r]));
  const q = byId.get(inquiryId);
  if (!q || q.kind !== 'inquiry') return null;
  const parents = (q.body.parentIds as string[]).map((id) => ({ inquiryId: id, question: byId.get(id)?.body.question ?? null }));
  return {
    value: { v: 1, kind: 'inquiry', inquiryId, graphRevision, question: q.body.question, answerForm: q.body.answerForm, language: q.body.language, parents },
    title: String(q.body.question),
    snippet: snippetOf(`Answer form: ${String(q.body.answerForm)}`),
  };
}

/** The projection of an edition: its exact synthesis text and the digest of its UTF-8 bytes. */
export function editionProjection(editionId: string, digest: string, graphRevision: string, title: string, markdown: string): Projection {
  return {
    value: { v: 1, kind: 'edition', editionId, digest, graphRevision, title, mediaType: 'text/markdown; charset=utf-8', text: markdown },
    title,
    snippet: snippetOf(markdown.replace(/\s+/g, ' ').trim()),
  };
}
