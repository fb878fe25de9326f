/**
 * Helpers shared by the lowdb tests: temporary folders, crash copies, small ops and dumps.
 * @module
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { BatchOp, DocumentHead, Storage } from '../../src/ports.ts';
import { AckRecorder } from './ack-record.ts';
import { FILE_HEADER_BYTES, readFrame } from './journal-codec.ts';
import { lowdbStorage, type LowdbStorageOptions } from './index.ts';

const tempDirs: string[] = [];

/** A fresh temporary folder, removed by {@link removeTempDirs}. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-lowdb-'));
  tempDirs.push(dir);
  return dir;
}

export const text = new TextEncoder();
export const head = (ref: string, version: number, extra: Partial<DocumentHead> = {}): DocumentHead => ({
  documentRef: ref,
  spaceRef: 'spc',
  accountId: 'acct',
  title: ref,
  version,
  snapshotVersion: 1,
  generation: 0,
  contentSha256: `sha${version}`,
  blockCount: 1,
  createdAt: 1,
  updatedAt: version,
  ...extra,
});
export const create = (ref: string): BatchOp => ({ kind: 'document.create', head: head(ref, 1), snapshot: text.encode(`snap ${ref}`) });
export const append = (ref: string, version: number, size = 16): BatchOp => ({
  kind: 'document.append',
  head: head(ref, version),
  update: Uint8Array.from({ length: size }, (_, i) => (i + version) % 256),
});
export const put = (key: string, value: unknown, expectedRevision?: number | null): BatchOp =>
  expectedRevision === undefined
    ? { kind: 'record.put', collection: 'c', key, value }
    : { kind: 'record.put', collection: 'c', key, value, expectedRevision };

/** Everything observable about `refs`, collection `c` and account `acct`, as plain data. */
export async function dump(storage: Storage, refs: string[]) {
  const docs = [];
  for (const ref of refs) {
    const doc = await storage.loadDocument(ref);
    docs.push(doc && { head: doc.head, snapshot: Array.from(doc.snapshot), updates: doc.updates.map((u) => [u.version, Array.from(u.update)]) });
  }
  return { docs, records: await storage.listRecords('c'), heads: await storage.listDocumentHeads('acct', 1000) };
}

/** What a crash would leave: the folder's files as they are now, minus the live process's LOCK. */
export async function crashCopy(dir: string): Promise<string> {
  const copy = await tempDir();
  await cp(dir, copy, { recursive: true, filter: (src) => !src.endsWith('LOCK') });
  return copy;
}

/** The newest journal file of `dir`. */
export async function journalOf(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((n) => n.startsWith('journal-')).sort();
  assert.ok(names.length > 0, 'a journal exists');
  return join(dir, names[names.length - 1]);
}

/** Removes every folder {@link tempDir} made. */
export async function removeTempDirs(): Promise<void> {
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Opens `dir`; returns the error message, or '' when it opened (the storage is closed again). */
export async function openError(dir: string, options: Omit<LowdbStorageOptions, 'dir'> = {}): Promise<string> {
  return lowdbStorage({ dir, ...options }).then(
    async (s) => {
      await s.close();
      return '';
    },
    (error: Error) => error.message,
  );
}

/**
 * Sets the acknowledgment record of `dir` (a crash copy) to batch `seq`: what it held when a crash
 * interrupted the write of the batches after `seq`, which were therefore never acknowledged.
 */
export async function acknowledgedUpTo(dir: string, seq: number): Promise<void> {
  await (await AckRecorder.open(dir, { seq, generation: 0, bytes: 0 })).close();
}

/** Start offsets of the intact frames of a journal file's bytes. */
export function frameStarts(data: Buffer): number[] {
  const starts: number[] = [];
  for (let at = FILE_HEADER_BYTES; at < data.length; ) {
    const read = readFrame(data, at);
    if (!read.ok) break;
    starts.push(at);
    at = read.end;
  }
  return starts;
}
