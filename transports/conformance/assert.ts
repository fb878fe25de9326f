/**
 * Assertions and request bodies of the API scenario suite (see ./suite.ts), written from the
 * contract: envelopes, the Document and DocumentMutationResult shapes, and well-formed bodies.
 * @module
 */
import * as assert from 'uvu/assert';
import { F, envelopeProblems, isObject, sha256, type Reply } from './client.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */

export const DAY = 86_400_000;
/** Cookie names a browser session could plausibly use; the contract does not name the cookie. */
export const SESSION_COOKIE = 'session=s1; sid=s1; svc_session=s1; __Host-session=s1; connect.sid=s1';

// ---------------------------------------------------------------------------------------------
// Assertion helpers

export function show(r: Reply): string {
  return `${r.method} ${r.path} → ${r.status} ${r.text.slice(0, 400)}`;
}

export function expectStatus(r: Reply, status: number): void {
  assert.is(r.status, status, `expected ${status}: ${show(r)}`);
}

export function expectEnvelope(r: Reply): void {
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/i, `JSON content type: ${show(r)}`);
  assert.equal(envelopeProblems(r), [], `envelope of ${show(r)}`);
}

/** Assert an error answer: status, code, envelope, and Retry-After on 429/503. Returns `error`. */
export function expectError(r: Reply, status: number, code: string): any {
  assert.is(r.status, status, `expected ${status} ${code}: ${show(r)}`);
  assert.ok(isObject(r.json) && isObject(r.json.error), `JSON error envelope: ${show(r)}`);
  assert.is(r.json.error.code, code, `error code: ${show(r)}`);
  expectEnvelope(r);
  if (status === 429 || status === 503) assert.ok(r.headers.get('retry-after'), `Retry-After on ${status}: ${show(r)}`);
  return r.json.error;
}

export function expectOk(r: Reply, status = 200): any {
  expectStatus(r, status);
  expectEnvelope(r);
  return r.json.data;
}

/** Assert the contract's Document shape; returns it. */
export function checkDocument(d: any, title?: string): any {
  assert.ok(isObject(d), 'document data is an object');
  for (const k of ['v', 'documentRef', 'spaceRef', 'title', 'version', 'format', 'formatGeneration', 'contentSha256', 'browserHref', 'document']) {
    assert.ok(k in d, `Document.${k} is required`);
  }
  assert.is(d.v, 1);
  assert.match(d.documentRef, F.documentRef);
  assert.match(d.spaceRef, F.spaceRef);
  assert.type(d.title, 'string');
  assert.ok([...d.title].length >= 1 && [...d.title].length <= 240, 'title 1-240 characters (code points)');
  if (title !== undefined) assert.is(d.title, title);
  assert.ok(Number.isSafeInteger(d.version) && d.version >= 1, `version ${d.version}`);
  assert.is(d.format, 'service-rich-document');
  assert.is(d.formatGeneration, 1);
  assert.match(d.contentSha256, F.sha256);
  assert.type(d.browserHref, 'string');
  assert.ok(d.browserHref.length >= 1 && d.browserHref.length <= 2048, 'browserHref 1-2048');
  assert.ok(isObject(d.document), 'document is an object');
  assert.is(d.document.type, 'blocks', 'rich-json document.type is "blocks" (decisions.md)');
  assert.ok(Array.isArray(d.document.blocks), 'document.blocks is an array');
  assert.is(sha256(JSON.stringify(d.document)), d.contentSha256, 'sha256(JSON.stringify(data.document)) === data.contentSha256');
  return d;
}

/** Assert a DocumentMutationResult envelope (200, receipts); returns data. */
export function checkMutationResult(
  r: Reply,
  expect: { documentRef: string; baseVersion?: number; idempotency?: 'created' | 'replayed'; laterMutations?: boolean },
): any {
  const data = expectOk(r, 200);
  assert.is(data.v, 1);
  checkDocument(data.document);
  const rc = data.receipt;
  assert.ok(isObject(rc), 'data.receipt');
  assert.is(rc.v, 1);
  assert.is(rc.documentRef, expect.documentRef);
  assert.match(rc.operationRef, F.operationRef);
  assert.ok(Number.isSafeInteger(rc.baseVersion) && rc.baseVersion >= 1 && rc.baseVersion <= 9007199254740990, 'baseVersion');
  assert.ok(Number.isSafeInteger(rc.resultingVersion) && rc.resultingVersion >= 2, 'resultingVersion');
  assert.ok(rc.resultingVersion > rc.baseVersion, 'resultingVersion rises above baseVersion');
  if (expect.baseVersion !== undefined) assert.is(rc.baseVersion, expect.baseVersion, 'baseVersion is the version the mutation was applied to');
  // A replay after later mutations may return the document as it was or as it is now: both readings pass.
  if (expect.laterMutations) assert.ok(data.document.version >= rc.resultingVersion, 'document.version >= receipt.resultingVersion');
  else assert.is(data.document.version, rc.resultingVersion, 'document.version === receipt.resultingVersion');
  assert.match(rc.contentSha256, F.sha256);
  if (data.document.version === rc.resultingVersion) assert.is(rc.contentSha256, data.document.contentSha256, 'receipt.contentSha256 === document.contentSha256');
  assert.ok(Array.isArray(rc.affectedBlockIds) && rc.affectedBlockIds.length >= 1 && rc.affectedBlockIds.length <= 256, 'affectedBlockIds 1-256');
  for (const id of rc.affectedBlockIds) assert.match(id, F.blockId);
  assert.ok(isObject(r.json.receipt), 'the envelope carries the idempotency receipt');
  if (expect.idempotency) assert.is(r.json.receipt.idempotency, expect.idempotency);
  return data;
}

// ---------------------------------------------------------------------------------------------
// Request bodies

export const researchSpec = (spaceRef: object = { kind: 'new-document', title: 'Boiling point of water' }) => ({
  v: 1,
  question: 'What is the boiling point of water at sea level, and how does altitude change it?',
  profile: 'focused',
  visibilityIntent: 'private',
  deliverable: { kind: 'report', form: 'question-answer', language: 'en' },
  spaceRef,
});

export const proposalRequest = () => ({
  v: 2,
  entities: [
    {
      key: 'acme',
      name: 'Acme Corporation',
      description: null,
      language: 'en',
      identifiers: ['https://acme.example/'],
      concepts: ['organization'],
    },
  ],
  facts: [{ key: 'acme.name', subject: 'acme', predicate: 'name', stance: 'reports', object: { kind: 'string', value: 'Acme Corporation' } }],
  evidence: [
    { key: 'ev-1', factKey: 'acme.name', bearing: 'supports', selector: null, source: { kind: 'uri', uri: 'https://acme.example/about' } },
  ],
  inquiries: [{ key: 'who-is-acme', question: 'Who is Acme?', answerForm: 'short-answer', language: 'en', parentKeys: [] }],
});
