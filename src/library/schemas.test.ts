import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { ServiceError } from '../errors.ts';
import { parseOrThrow } from '../validation.ts';
import { LIBRARY_COMMAND_TYPES, LibraryCommandSchema, requiredScope } from './schemas.ts';

const key = 'library-key-000001';
function refusal(input: unknown): { code: string; fields: string[] } {
  try {
    parseOrThrow(LibraryCommandSchema, input, 'library command');
  } catch (e) {
    assert.instance(e, ServiceError);
    return { code: (e as ServiceError).code, fields: ((e as ServiceError).fieldErrors ?? []).map((f) => f.field) };
  }
  throw new Error('expected a refusal');
}

test('a well-formed command of every type parses', () => {
  const sel = { captureId: `lcap_${'a'.repeat(24)}`, representationId: `lrep_${'b'.repeat(24)}`, blockId: 'p1', start: 0, end: 4, exact: 'text', prefix: '', suffix: ' more' };
  const item = `litm_${'c'.repeat(24)}`;
  const ok = [
    { type: 'save-link', url: 'https://example.org/a', idempotencyKey: key },
    { type: 'list' },
    { type: 'list', limit: 5, cursor: 'abc' },
    { type: 'get', itemId: item },
    { type: 'reader-page', sourceId: item },
    { type: 'highlight', sourceId: item, selections: [sel], idempotencyKey: key },
    { type: 'create-note', sourceId: item, markdown: '**why** it matters', idempotencyKey: key },
    { type: 'set-reading-state', itemId: item, expectedRevision: 2, read: true, archived: false, idempotencyKey: key },
    { type: 'prepare-upload', fileName: 'paper.pdf', contentType: 'application/pdf', byteLength: 1000, idempotencyKey: key },
    { type: 'finish-upload', uploadId: `lupl_${'d'.repeat(24)}`, sha256: 'e'.repeat(64), idempotencyKey: key },
    { type: 'recapture', sourceId: item, idempotencyKey: key },
    { type: 'prepare-import' },
  ];
  assert.equal(new Set(ok.map((c) => c.type)), new Set(LIBRARY_COMMAND_TYPES));
  for (const c of ok) assert.ok(v.safeParse(LibraryCommandSchema, c).success, c.type);
});

test('an unknown type is refused on the type field', () => {
  assert.equal(refusal({ type: 'tag', idempotencyKey: key }), { code: 'INVALID_REQUEST', fields: ['type'] });
  assert.equal(refusal({ url: 'https://example.org' }).fields, ['type']);
});

test('an unknown field is refused by name', () => {
  assert.equal(refusal({ type: 'save-link', url: 'https://example.org/', idempotencyKey: key, tags: ['x'] }), { code: 'INVALID_REQUEST', fields: ['tags'] });
  assert.equal(refusal({ type: 'list', sort: 'oldest' }).fields, ['sort']);
});

test('library idempotency keys are any 16-256 characters without control characters', () => {
  const save = (k: unknown) => ({ type: 'save-link', url: 'https://example.org/', idempotencyKey: k });
  for (const good of ['a'.repeat(16), 'a'.repeat(256), 'has spaces in the key', 'dots.are.allowed.too', 'ünïcödé-kéy-ñ-0001', '😀'.repeat(256)]) {
    assert.ok(v.safeParse(LibraryCommandSchema, save(good)).success, good);
  }
  for (const bad of ['a'.repeat(15), 'a'.repeat(257), 'tab\tin-the-key-000', 'newline\nin-the-key-0', 'del\u007fin-the-key-000', 42, undefined]) {
    assert.equal(refusal(save(bad)).fields, ['idempotencyKey'], String(bad));
  }
});

test('urls must be absolute http(s) without credentials', () => {
  for (const url of ['ftp://example.org/file', 'javascript:alert(1)', '/relative', 'https://user:pw@example.org/', 'not a url', `https://example.org/${'a'.repeat(2100)}`]) {
    assert.equal(refusal({ type: 'save-link', url, idempotencyKey: key }).fields, ['url'], url);
  }
});

test('selections need every identifier and sane offsets', () => {
  const item = `litm_${'c'.repeat(24)}`;
  const r = refusal({ type: 'highlight', sourceId: item, idempotencyKey: key, selections: [{ captureId: 'x', representationId: `lrep_${'b'.repeat(24)}`, blockId: 'p1', start: -1, end: 2, exact: 'ab', prefix: '', suffix: '', color: 'red' }] });
  assert.ok(r.fields.includes('selections.0.captureId'));
  assert.ok(r.fields.includes('selections.0.start'));
  assert.ok(r.fields.includes('selections.0.color'));
  assert.equal(refusal({ type: 'highlight', sourceId: item, idempotencyKey: key, selections: [] }).fields, ['selections']);
});

test('reads need library:read, every other type (and unknown ones) library:write', () => {
  assert.is(requiredScope('list'), 'library:read');
  assert.is(requiredScope('get'), 'library:read');
  assert.is(requiredScope('reader-page'), 'library:read');
  for (const t of ['save-link', 'highlight', 'create-note', 'set-reading-state', 'prepare-upload', 'finish-upload', 'prepare-import', 'unknown']) {
    assert.is(requiredScope(t), 'library:write', t);
  }
});

test('the command schema converts to JSON Schema without loss (the OpenAPI document can publish it)', () => {
  const schema = toJsonSchema(LibraryCommandSchema, { errorMode: 'throw' }) as { oneOf: { properties: { type: { const: string } }; additionalProperties: boolean }[] };
  assert.equal(schema.oneOf.map((o) => o.properties.type.const), [...LIBRARY_COMMAND_TYPES]);
  assert.ok(schema.oneOf.every((o) => o.additionalProperties === false));
});

test.run();
