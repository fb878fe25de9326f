import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildOpenApi } from '../src/contract/openapi.ts';
import { AnswerChecker, runFuzz, summarize, type FuzzRequest } from './fuzz-kit.ts';

test('a seeded fuzz run over every public operation of /openapi.json finds no schema violation', async () => {
  const report = await runFuzz({ seed: 16, runs: 250, timeoutMs: 5000 });
  assert.is(report.requests, 250);
  assert.is(report.violations.length, 0, `violations:\n${summarize(report.violations)}`);
  const doc = buildOpenApi() as { paths: Record<string, Record<string, { operationId: string }>> };
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  const missed = operations.filter((id) => !report.operations[id]);
  assert.equal(missed, [], 'every public operation was tried');
  const statuses = Object.keys(report.statuses).map(Number);
  for (const status of [200, 400, 401, 403, 404, 405]) assert.ok(statuses.includes(status), `some answer was ${status}: ${statuses.join(',')}`);
});

test('the fuzz checker reports 500s, undeclared statuses, bodies off the schema, missing headers and header values off their schema', () => {
  const doc = buildOpenApi() as any;
  const checker = new AnswerChecker(doc);
  const op = doc.paths['/api/v1/auth'].get;
  const request: FuzzRequest = { operationId: 'getAuth', template: '/api/v1/auth', method: 'GET', wrongMethod: false, path: '/api/v1/auth', token: 'demo', headers: {}, mutation: 'valid' };
  const json = { 'content-type': 'application/json', 'x-request-id': 'req_0123456789abcdef' };
  const error = JSON.stringify({ error: { code: 'NOT_FOUND', message: 'x' }, meta: { requestId: 'req_0123456789abcdef' } });
  assert.ok(checker.check(request, op, { status: 500, headers: json, text: error }).some((p) => p.startsWith('status 500')));
  assert.ok(checker.check(request, op, { status: 404, headers: json, text: error }).some((p) => p === 'status 404 is not declared'));
  assert.ok(checker.check(request, op, { status: 200, headers: json, text: '{"data":1}' }).some((p) => p.startsWith('the body does not validate')));
  assert.ok(checker.check(request, op, { status: 401, headers: { 'content-type': 'application/json' }, text: error }).includes('no X-Request-Id'));
  assert.ok(checker.check(request, op, { status: 503, headers: json, text: error }).includes('503 without Retry-After'));
  assert.ok(checker.check(request, op, { status: 401, headers: { ...json, 'x-request-id': 'not an id!' }, text: error }).some((p) => p.startsWith('the header X-Request-Id does not validate')));
  assert.ok(checker.check({ ...request, method: 'DELETE', wrongMethod: true }, op, { status: 405, headers: json, text: error }).includes('405 without Allow'));
  assert.ok(checker.check({ ...request, method: 'DELETE', wrongMethod: true }, op, { status: 200, headers: json, text: '{}' }).some((p) => p.includes('does not have')));
});

test.run();
