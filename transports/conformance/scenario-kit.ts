/**
 * The small verbs the API scenarios share (create, read, snapshot, mutate, budget probes) over one
 * {@link ScenarioClient}.
 * @module
 */
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { newKey, type ScenarioClient } from './client.ts';
import { checkDocument, checkMutationResult, expectOk } from './assert.ts';
import type { RichBlock } from './tree.ts';


/** The uvu suite the scenarios register on. */
export type Suite = Test;

/** Build the verbs over a client. */
export function createKit(c: ScenarioClient) {

  const createDoc = async (token: string, title = 'Scenario document'): Promise<any> => {
    const r = await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1, title } });
    return checkDocument(expectOk(r, 201), title);
  };
  const read = (token: string, ref: string, query = '', headers: Record<string, string> = {}) =>
    c.call('GET', `/api/v1/documents/${ref}${query}`, { token, headers });
  /** The current rich-json snapshot with its Service-Revision. */
  const snapshot = async (token: string, ref: string): Promise<{ rev: string; version: number; blocks: RichBlock[]; doc: any }> => {
    const r = await read(token, ref);
    const doc = checkDocument(expectOk(r));
    const rev = r.headers.get('service-revision');
    assert.ok(rev, `Service-Revision on the read of ${ref}`);
    return { rev: rev!, version: doc.version, blocks: doc.document.blocks, doc };
  };
  const mutate = (token: string, ref: string, mutation: object, o: { revision?: string | null; key?: string; intent?: string } = {}) => {
    const opts: { token: string; key: string; body: object; revision?: string } = {
      token,
      key: o.key ?? newKey(),
      body: { v: 1, intent: o.intent ?? 'scenario change', mutation },
    };
    if (o.revision) opts.revision = o.revision;
    return c.call('POST', `/api/v1/documents/${ref}/mutations`, opts);
  };
  /** Append blocks (create mutation) and return their server-assigned ids in document order. */
  const add = async (token: string, ref: string, blocks: object[], parentBlockId: string | null = null, beforeBlockId: string | null = null) => {
    const { rev } = await snapshot(token, ref);
    const r = await mutate(token, ref, { kind: 'create', parentBlockId, beforeBlockId, blocks }, { revision: rev });
    return checkMutationResult(r, { documentRef: ref, idempotency: 'created' }).receipt.affectedBlockIds as string[];
  };
  const p = (markdown: string, children?: object[]) => (children ? { type: 'paragraph', markdown, children } : { type: 'paragraph', markdown });
  /** remainingBudget as GET /auth reports it. */
  const remaining = async (token: string): Promise<number> => expectOk(await c.call('GET', '/api/v1/auth', { token })).remainingBudget;
  /** How much GET /auth itself appears to cost between two of its own reports (1 or, if it is uncharged, 0). */
  const authCost = async (token: string): Promise<number> => (await remaining(token)) - (await remaining(token));
  return { c, createDoc, read, snapshot, mutate, add, p, remaining, authCost };
}

/** The verbs of {@link createKit}. */
export type Kit = ReturnType<typeof createKit>;
