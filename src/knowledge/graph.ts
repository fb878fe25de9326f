/**
 * The space graph: the immutable records an accepted proposal becomes, and graph revisions.
 * @remarks Identity is conservative: every accepted entity becomes a new Entity record with its own
 * `kent_` id, even when an existing entity has the same name or identifier (those are reported as
 * conflicts at submission, never merged). A graph revision is a digest chain over the records in the
 * order they were accepted, so it names one exact state of a space's graph.
 * @module
 */
import type { Sha256Hex } from '../hash.ts';
import type { IdSource, RefMinter } from '../ids.ts';
import { canonicalJson } from './canonical-json.ts';
import type { GraphRecord, GraphRecordKind, ProposalRecord } from './records.ts';

/** The revision of a space's empty graph. */
export function genesisRevision(sha256: Sha256Hex, spaceRef: string): string {
  return sha256(`kw-graph-v1\n${spaceRef}\nempty`);
}

/** The revision after appending `records` to the graph at `previous`. */
export function nextRevision(sha256: Sha256Hex, previous: string, records: readonly GraphRecord[]): string {
  return sha256(['kw-graph-v1\n', previous, '\n', sha256(canonicalJson(records))]);
}

const PREFIX: Partial<Record<GraphRecordKind, string>> = {
  statement: 'kstm_',
  evidence: 'kevd_',
  'type-membership': 'ktyp_',
  activity: 'kact_',
  'review-decision': 'krdc_',
};

/** What acceptance needs besides the proposal. */
export interface AcceptanceContext {
  refs: RefMinter;
  ids: IdSource;
  now: number;
  /** Ordinal of the first new record (the space's record count + 1). */
  firstOrdinal: number;
  person: string;
  note: string | null;
}

/** The records of one acceptance and the ids minted for the proposal's keys. */
export interface AcceptedGraph {
  records: GraphRecord[];
  entityIds: Record<string, string>;
  inquiryIds: Record<string, string>;
}

/** Build the graph records an accepted proposal becomes (Entity, Type membership, Statement, Evidence, Inquiry, Review decision, Activity). */
export function acceptedRecords(p: ProposalRecord, ctx: AcceptanceContext): AcceptedGraph {
  const records: GraphRecord[] = [];
  const add = (kind: GraphRecordKind, id: string, body: Record<string, unknown>) => {
    records.push({ v: 1, id, kind, spaceRef: p.spaceRef, ordinal: ctx.firstOrdinal + records.length, proposalRef: p.proposalRef, createdAt: ctx.now, body });
    return id;
  };
  const mint = (kind: GraphRecordKind) => `${PREFIX[kind]}${ctx.ids.base36(24)}`;
  const req = p.request;
  const entityIds: Record<string, string> = {};
  const inquiryIds: Record<string, string> = {};
  for (const e of req.entities) entityIds[e.key] = ctx.refs.entityId();
  for (const q of req.inquiries) inquiryIds[q.key] = ctx.refs.inquiryId();
  const statementIds: Record<string, string> = {};

  for (const e of req.entities) {
    const entityId = entityIds[e.key]!;
    add('entity', entityId, { key: e.key, name: e.name, description: e.description, language: e.language, identifiers: e.identifiers, concepts: e.concepts });
    for (const concept of e.concepts) add('type-membership', mint('type-membership'), { entityId, concept });
  }
  for (const f of req.facts) {
    const object = f.object.kind === 'entity' ? { kind: 'entity', entityId: entityIds[f.object.entityKey]! } : f.object;
    statementIds[f.key] = add('statement', mint('statement'), { key: f.key, subjectId: entityIds[f.subject]!, predicate: f.predicate, stance: f.stance, object });
  }
  for (const e of req.evidence) {
    const source = e.source.kind === 'entity' ? { kind: 'entity', entityId: entityIds[e.source.entityKey]! } : e.source;
    add('evidence', mint('evidence'), { key: e.key, statementId: statementIds[e.factKey]!, bearing: e.bearing, selector: e.selector, source });
  }
  for (const q of req.inquiries) {
    add('inquiry', inquiryIds[q.key]!, { key: q.key, question: q.question, answerForm: q.answerForm, language: q.language, parentIds: q.parentKeys.map((k) => inquiryIds[k]!) });
  }
  add('review-decision', mint('review-decision'), { reviewRef: p.reviewRef, decision: 'accept', person: ctx.person, note: ctx.note });
  add('activity', mint('activity'), { action: 'accept-proposal', reviewRef: p.reviewRef, jobId: p.jobId, person: ctx.person });
  return { records, entityIds, inquiryIds };
}

/** Normalized entity name for same-name conflict detection: NFKC, case-folded, inner whitespace collapsed. */
export function normalizedName(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Text of a graph record for search: a title and a body. Null for records that carry no searchable text. */
export function searchTextOf(r: GraphRecord): { title: string; text: string } | null {
  const b = r.body;
  switch (r.kind) {
    case 'entity':
      return { title: String(b.name), text: [b.description ?? '', ...(b.identifiers as string[])].join(' ') };
    case 'inquiry':
      return { title: String(b.question), text: String(b.answerForm) };
    case 'statement': {
      const o = b.object as Record<string, unknown>;
      const value = o.kind === 'text' ? o.text : o.kind === 'uri' ? o.uri : o.kind === 'duration' ? o.iso8601 : o.kind === 'entity' ? '' : String(o.value);
      return { title: `${String(b.predicate)} ${String(value)}`.trim(), text: `${String(b.stance)} ${String(b.key)}` };
    }
    case 'evidence': {
      const s = b.source as Record<string, unknown>;
      return { title: String(b.selector ?? b.key), text: `${String(b.bearing)} ${s.kind === 'uri' ? String(s.uri) : ''}` };
    }
    default:
      return null;
  }
}
