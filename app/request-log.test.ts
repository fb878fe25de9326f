import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Handler, PlainRequest } from '../src/api/types.ts';
import { dataDirProblem } from './data-dir.ts';
import { formatEntry, lineBatcher, maskTokens, safePath, withRequestLog, type RequestLogEntry } from './request-log.ts';
import { serveOptionsFrom } from './serve-command.ts';

const TOKEN = 'svc_agent_v1_scred_0123456789abcdef01234567_abcdefghijklmnopqrstuvwxyzABCDEF12';
const silent = { out: () => {}, err: () => {} };

const request = (url: string, method = 'GET'): PlainRequest => ({ method, url, headers: { authorization: `Bearer ${TOKEN}` }, body: null });

test('paths keep harmless query values and mask every other value and anything token-shaped', () => {
  assert.is(safePath('/api/v1/auth'), '/api/v1/auth');
  assert.is(safePath('/api/v1/documents?limit=5&cursor=abc'), '/api/v1/documents?limit=5&cursor=abc');
  assert.is(safePath(`/api/v1/documents/x?format=markdown&token=${TOKEN}&access_token=s3cret&flag`), '/api/v1/documents/x?format=markdown&token=***&access_token=***&flag');
  assert.is(safePath(`/api/v1/${TOKEN}`), '/api/v1/svc_agent_v1_scred_***');
  assert.is(safePath(`/x?format=${TOKEN}`), '/x?format=svc_agent_v1_scred_***');
  assert.is(safePath('/x?'), '/x');
  assert.is(maskTokens(`bad token ${TOKEN}.`), 'bad token svc_agent_v1_scred_***.');
});

test('a line carries time, method, path, status, duration, request id and, for errors, code and message', async () => {
  const lines: string[] = [];
  let clock = 100;
  const inner: Handler = async (r) => {
    clock += 12.345;
    return r.url.startsWith('/bad')
      ? { status: 401, headers: { 'x-request-id': 'req_2' }, body: JSON.stringify({ error: { code: 'AUTH_REQUIRED', message: `Token ${TOKEN} is unknown.` }, meta: {} }) }
      : { status: 200, headers: { 'x-request-id': 'req_1' }, body: new TextEncoder().encode('{"data":{}}') };
  };
  const logged = withRequestLog(inner, (l) => lines.push(l), 'json', () => clock);
  assert.is((await logged(request('/api/v1/auth?token=abc'))).status, 200);
  assert.is((await logged(request('/bad', 'POST'))).status, 401);
  const [ok, bad] = lines.map((l) => JSON.parse(l) as RequestLogEntry);
  assert.match(ok!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal({ ...ok!, time: '' }, { time: '', method: 'GET', path: '/api/v1/auth?token=***', status: 200, durationMs: 12.3, requestId: 'req_1' });
  assert.equal(bad!.error, { code: 'AUTH_REQUIRED', message: 'Token svc_agent_v1_scred_*** is unknown.' });
  assert.ok(!lines.join('\n').includes(TOKEN.slice(19)), 'no token in any line');
  assert.ok(!lines.join('\n').includes('authorization'), 'no header in any line');

  const text = formatEntry(bad!, 'text');
  assert.is(text, `${bad!.time} POST /bad 401 12.3ms req_2 AUTH_REQUIRED "Token svc_agent_v1_scred_*** is unknown."`);
  assert.is(formatEntry({ ...ok!, requestId: null }, 'text'), `${ok!.time} GET /api/v1/auth?token=*** 200 12.3ms -`);
});

test('an error answer that is not an envelope (HTML, empty) is logged without a code', async () => {
  const lines: string[] = [];
  const inner: Handler = async (r) => (r.url === '/page' ? { status: 401, headers: { 'content-type': 'text/html' }, body: '<p>sign in</p>' } : { status: 404, headers: {} });
  const logged = withRequestLog(inner, (l) => lines.push(l), 'text');
  await logged(request('/page'));
  await logged(request('/none'));
  assert.match(lines[0]!, / GET \/page 401 \d+\.\dms -$/);
  assert.match(lines[1]!, / GET \/none 404 \d+\.\dms -$/);
});

test('--quiet drops the request log; --log json picks JSON lines; the document pages need the explicit flag to open', () => {
  assert.is(serveOptionsFrom(['--quiet'], silent).requestLog, undefined);
  assert.is(serveOptionsFrom([], silent).requestLog?.format, 'text');
  assert.is(serveOptionsFrom(['--log', 'json'], silent).requestLog?.format, 'json');
  assert.is(serveOptionsFrom([], silent).documentPages, 'sign-in-required');
  assert.is(serveOptionsFrom(['--dev-open-document-pages'], silent).documentPages, 'open');
});

test('data folder problems name the folder and the way out', () => {
  const error = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
  assert.is(dataDirProblem('/d', error('EACCES')), 'the data folder /d is not writable (EACCES); fix its permissions or choose another folder with --data');
  assert.match(dataDirProblem('/d', error('ENOTDIR')), /^the data folder \/d cannot be created: a file is in the way/);
  assert.match(dataDirProblem('/d', error('ENOSPC')), /^the data folder \/d cannot be used: ENOSPC: failed$/);
});

test('request lines go out together, in writes of at most 256 lines, in order, when the delay has passed; flush writes at once', async () => {
  const writes: string[] = [];
  const log = lineBatcher((text) => writes.push(text), 256, 60_000);
  for (let i = 0; i < 600; i++) log.line(`line ${i}`);
  assert.is(writes.length, 2, 'two full writes of 256 lines happen at once; the rest waits');
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(writes.length, 2, 'the rest waits for the delay');
  log.flush();
  assert.equal(writes.map((w) => w.split('\n').length), [256, 256, 88]);
  assert.equal(writes.join('\n').split('\n'), Array.from({ length: 600 }, (_, i) => `line ${i}`));
  log.flush();
  assert.is(writes.length, 3, 'nothing waits: flush writes nothing');
  // With a short delay the waiting lines go out by themselves.
  const later: string[] = [];
  const quick = lineBatcher((text) => later.push(text), 256, 20);
  quick.line('a');
  quick.line('b');
  for (let i = 0; i < 200 && later.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(later, ['a\nb'], 'one write after the delay');
});

test.run();
