/**
 * Entities of a space by normalized name and by canonical identifier, kept as lookup records in the
 * same batch as the graph records. Used to report conflicts (never to merge).
 * @module
 */
import type { EngineDeps } from '../deps.ts';
import type { BatchOp } from '../ports.ts';
import { normalizedName } from './graph.ts';
import type { ProposalRequest } from './proposal-schema.ts';
import { KnowledgeCollections, type GraphRecord } from './records.ts';

/** One entity a lookup key leads to. */
interface LookupEntry {
  entityId: string;
  name: string;
}

const MAX_CONFLICTS = 64;

function nameKey(deps: EngineDeps, spaceRef: string, name: string): string {
  return `${spaceRef}/n/${deps.sha256(normalizedName(name))}`;
}
function identifierKey(deps: EngineDeps, spaceRef: string, identifier: string): string {
  return `${spaceRef}/i/${deps.sha256(identifier)}`;
}

async function entries(deps: EngineDeps, key: string): Promise<LookupEntry[]> {
  const rec = await deps.storage.getRecord<{ entries: LookupEntry[] }>(KnowledgeCollections.lookup, key);
  return rec?.value.entries ?? [];
}

/**
 * Conflicts of a proposal with the current graph: each entity with the same normalized name or a
 * shared canonical identifier as an existing entity, one message each (at most 64).
 */
export async function findConflicts(deps: EngineDeps, spaceRef: string, request: ProposalRequest): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < request.entities.length && out.length < MAX_CONFLICTS; i++) {
    const e = request.entities[i]!;
    for (const hit of await entries(deps, nameKey(deps, spaceRef, e.name))) {
      out.push(`entities.${i} (${e.key}): same name as existing entity ${hit.entityId} "${hit.name}"; not merged, a person decides in review.`.slice(0, 4096));
    }
    for (const id of e.identifiers) {
      for (const hit of await entries(deps, identifierKey(deps, spaceRef, id))) {
        out.push(`entities.${i} (${e.key}): identifier ${id} is also held by existing entity ${hit.entityId} "${hit.name}"; not merged, a person decides in review.`.slice(0, 4096));
      }
    }
  }
  return out.slice(0, MAX_CONFLICTS);
}

/** The lookup record puts for newly accepted Entity records (compare-and-set on each lookup record). */
export async function lookupOps(deps: EngineDeps, spaceRef: string, records: readonly GraphRecord[]): Promise<BatchOp[]> {
  const added = new Map<string, LookupEntry[]>();
  for (const r of records) {
    if (r.kind !== 'entity') continue;
    const name = String(r.body.name);
    const entry = { entityId: r.id, name };
    const keys = [nameKey(deps, spaceRef, name), ...(r.body.identifiers as string[]).map((id) => identifierKey(deps, spaceRef, id))];
    for (const k of new Set(keys)) added.set(k, [...(added.get(k) ?? []), entry]);
  }
  const ops: BatchOp[] = [];
  for (const [key, list] of added) {
    const rec = await deps.storage.getRecord<{ entries: LookupEntry[] }>(KnowledgeCollections.lookup, key);
    ops.push({
      kind: 'record.put',
      collection: KnowledgeCollections.lookup,
      key,
      value: { entries: [...(rec?.value.entries ?? []), ...list] },
      expectedRevision: rec ? rec.revision : null,
    });
  }
  return ops;
}
