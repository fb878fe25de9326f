/**
 * Op builders, assertions and dumps shared by the conformance tests.
 * @module
 */
import * as assert from 'uvu/assert';
import { isStorageConflict } from '../../src/ports.ts';
import type { BatchOp, DocumentHead, RecordIndexEntry, Storage, StoredDocument, StoredRecord, StoredUpdate } from '../../src/ports.ts';

const text = new TextEncoder();
/** UTF-8 bytes of `s`. */
export const bytes = (s: string): Uint8Array => text.encode(s);
/** Every byte value, several times over: catches codecs that are not binary-exact. */
export const ALL_BYTES = Uint8Array.from({ length: 256 * 40 }, (_, i) => (i * 7) % 256);

/** A head of `ref` at `version` with fixed fields (account `acct_a`), overridden by `extra`. */
export function head(ref: string, version: number, extra: Partial<DocumentHead> = {}): DocumentHead {
  return {
    documentRef: ref,
    spaceRef: 'spc_conformance',
    accountId: 'acct_a',
    title: `Title of ${ref} ✓`,
    version,
    snapshotVersion: 1,
    generation: 0,
    contentSha256: `sha-${ref}-${version}`,
    blockCount: version,
    createdAt: 1_000,
    updatedAt: 1_000 + version,
    ...extra,
  };
}

/** A `document.create` of `ref` at version 1. */
export const create = (ref: string, extra: Partial<DocumentHead> = {}, snapshot = bytes(`snap:${ref}:1`)): BatchOp => ({
  kind: 'document.create',
  head: head(ref, 1, extra),
  snapshot,
});
/** A `document.append` of `ref` carrying `version`. */
export const append = (ref: string, version: number, extra: Partial<DocumentHead> = {}, update = bytes(`upd:${ref}:${version}`)): BatchOp => ({
  kind: 'document.append',
  head: head(ref, version, extra),
  update,
});
/** A `document.compact` of `ref` to `snapshotVersion`, writing a snapshot of history `generation` (default 0). */
export const compact = (ref: string, snapshotVersion: number, generation = 0): BatchOp => ({
  kind: 'document.compact',
  documentRef: ref,
  snapshotVersion,
  generation,
  snapshot: bytes(`snap:${ref}:${snapshotVersion}:${generation}`),
});
/** A `record.put`, with `expectedRevision` and `index` only when given. */
export function put(collection: string, key: string, value: unknown, expectedRevision?: number | null, index?: RecordIndexEntry): BatchOp {
  const op: Extract<BatchOp, { kind: 'record.put' }> = { kind: 'record.put', collection, key, value };
  if (expectedRevision !== undefined) op.expectedRevision = expectedRevision;
  if (index !== undefined) op.index = index;
  return op;
}

/** A put that lists the record in `partition` at `sortKey`. */
export function putIndexed(collection: string, key: string, value: unknown, partition: string, sortKey: string, expectedRevision?: number | null): BatchOp {
  return put(collection, key, value, expectedRevision, { partition, sortKey });
}

/** A `stream.append`. */
export function streamAppend(stream: string, seq: number, value: unknown): BatchOp {
  return { kind: 'stream.append', stream, seq, value };
}

/** Polls `condition` (each macrotask) until it holds or about a second has passed; for notifications that may arrive later. */
export async function eventually(condition: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 1000;
  while (!condition()) {
    if (Date.now() > until) assert.unreachable(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A `record.delete`, with `expectedRevision` only when given. */
export function del(collection: string, key: string, expectedRevision?: number): BatchOp {
  return expectedRevision === undefined
    ? { kind: 'record.delete', collection, key }
    : { kind: 'record.delete', collection, key, expectedRevision };
}

/** Byte arrays as plain number arrays, so deep equality is exact and diffs are readable. */
export const plainUpdates = (updates: StoredUpdate[] | null) =>
  updates === null ? null : updates.map((u) => ({ version: u.version, update: Array.from(u.update) }));
/** A stored document as plain data (see {@link plainUpdates}). */
export const plainDoc = (doc: StoredDocument | null) =>
  doc === null ? null : { head: doc.head, snapshot: Array.from(doc.snapshot), updates: plainUpdates(doc.updates) };

/** Appends versions `from`..`to` of `ref`, one batch each. */
export async function appendVersions(storage: Storage, ref: string, from: number, to: number): Promise<void> {
  for (let v = from; v <= to; v++) await storage.commit([append(ref, v)]);
}

/** Asserts that `promise` rejects with a StorageConflictError (at `opIndex`, when given). */
export async function rejectsWithConflict(promise: Promise<unknown>, opIndex?: number): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isStorageConflict(error), `expected StorageConflictError, got ${String(error)}`);
    if (opIndex !== undefined) assert.is((error as { opIndex: number }).opIndex, opIndex, 'opIndex of the failing op');
    return;
  }
  assert.unreachable('expected the commit to reject with StorageConflictError');
}

/** Everything observable about a few refs, collections and accounts, as plain data. */
export async function dump(storage: Storage, refs: string[], collections: string[], accounts: string[]) {
  const docs: Record<string, unknown> = {};
  for (const ref of refs) docs[ref] = { doc: plainDoc(await storage.loadDocument(ref)), head: await storage.getDocumentHead(ref) };
  const records: Record<string, StoredRecord[]> = {};
  for (const c of collections) records[c] = await storage.listRecords(c);
  const heads: Record<string, DocumentHead[]> = {};
  for (const a of accounts) heads[a] = await storage.listDocumentHeads(a, 1000);
  return { docs, records, heads };
}


/** Every listing page of `partitions` (limit 1000) and every stream's entries and head, as plain data. */
export async function dumpListings(storage: Storage, collection: string, partitions: string[], streams: string[]) {
  const listings: Record<string, unknown> = {};
  for (const p of partitions) listings[p] = await storage.listPage(collection, p, 1000);
  const entries: Record<string, unknown> = {};
  for (const s of streams) entries[s] = { entries: await storage.readStream(s, 0, 1000), head: await storage.streamHead(s) };
  return { listings, entries };
}

/** Asserts that `promise` rejects with an error of class `type` (by name). */
export async function rejectsWith(promise: Promise<unknown>, type: 'TypeError' | 'RangeError', what: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.is((error as Error).name, type, `${what}: ${String(error)}`);
    return;
  }
  assert.unreachable(`${what}: expected a ${type}`);
}
