import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { main, parseDuration, startServe, type CliIO } from './cli.ts';
import { DEMO_RECORD_FILE, serve } from './serve.ts';

const root = resolve(import.meta.dirname, '../..');

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

test('bad flags, bad values and unknown commands print the usage on stderr and exit 2', async () => {
  for (const argv of [
    ['serve', '--nope'],
    ['serve', '--port', 'eighty'],
    ['serve', '--port', '70000'],
    ['serve', '--storage', 'postgres'],
    ['serve', '--seed', 'everything'],
    ['serve', '--budget-window', '10 minutes'],
    ['serve', 'extra-positional'],
    ['token', 'create', '--url', 'http://127.0.0.1:1'],
    ['token', 'create', '--url', 'http://127.0.0.1:1', '--operator-key', 'k', '--scopes', 'document:read', '--budget', '0'],
    ['frobnicate'],
    [],
  ]) {
    const { io, out, err } = captureIO();
    assert.is(await main(argv, io), 2, argv.join(' '));
    assert.is(out.length, 0);
    assert.ok(err.join('\n').includes('Usage:'), `usage printed for ${argv.join(' ')}`);
  }
  const { io, out } = captureIO();
  assert.is(await main(['help'], io), 0);
  assert.match(out.join('\n'), /kw serve \[options\]/);
});

test('durations take ms, s, m, h and d', () => {
  assert.is(parseDuration('500ms'), 500);
  assert.is(parseDuration('30s'), 30_000);
  assert.is(parseDuration('10m'), 600_000);
  assert.is(parseDuration('24h'), 86_400_000);
  assert.is(parseDuration('7d'), 604_800_000);
  assert.throws(() => parseDuration('0s'));
  assert.throws(() => parseDuration('1.5h'));
});

test('token create calls the operator API and prints the token (text and --json)', async () => {
  const server = await serve({ port: 0, storage: 'memory', operatorKey: 'operator-key-for-cli-tests' });
  try {
    const { io, out, err } = captureIO();
    const code = await main(
      ['token', 'create', '--url', server.url, '--operator-key', server.operatorKey, '--scopes', 'document:read,document:create', '--account', 'acme', '--budget', '50', '--expires-in-days', '7', '--json'],
      io,
    );
    assert.is(code, 0, err.join('\n'));
    assert.is(out.length, 1);
    const data = JSON.parse(out[0]!) as { token: string; credentialRef: string };
    const res = await fetch(`${server.url}/api/v1/auth`, { headers: { authorization: `Bearer ${data.token}` } });
    assert.is(res.status, 200);
    const principal = ((await res.json()) as { data: { scopes: string[]; requestBudget: number } }).data;
    assert.equal([...principal.scopes].sort(), ['document:create', 'document:read']);
    assert.is(principal.requestBudget, 50);

    const text = captureIO();
    assert.is(await main(['token', 'create', '--url', `${server.url}/`, '--operator-key', server.operatorKey, '--scopes', 'document:read'], text.io), 0);
    assert.match(text.out[0]!, /^token: svc_agent_v1_scred_/);
    assert.ok(text.out.some((l) => l.includes(`curl -H "Authorization: Bearer svc_agent_v1_scred_`) && l.includes(`${server.url}/api/v1/auth`)));

    const wrong = captureIO();
    assert.is(await main(['token', 'create', '--url', server.url, '--operator-key', 'not-the-operator-key', '--scopes', 'document:read'], wrong.io), 1);
    assert.match(wrong.err.join('\n'), /401 AUTH_REQUIRED/);
  } finally {
    await server.close();
  }
});

test('the demo seed is loaded once per data folder and its token reused on the next start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-serve-'));
  try {
    const first = await serve({ port: 0, data: dir, seed: 'demo' });
    let token: string;
    let documentRef: string;
    try {
      assert.ok(first.demo && first.demoSeededNow);
      token = first.demo.token;
      documentRef = first.demo.documentRef;
      assert.is((await stat(join(dir, DEMO_RECORD_FILE))).mode & 0o777, 0o600);
      const record = JSON.parse(await readFile(join(dir, DEMO_RECORD_FILE), 'utf8')) as { token: string };
      assert.is(record.token, token);
    } finally {
      await first.close();
    }
    // The lock is released by close(), so the folder opens again; the seed is not loaded twice.
    const second = await serve({ port: 0, data: dir, seed: 'demo' });
    try {
      assert.is(second.demo?.token, token);
      assert.is(second.demoSeededNow, false);
      const res = await fetch(`${second.url}/api/v1/documents`, { headers: { authorization: `Bearer ${token}` } });
      const page = ((await res.json()) as { data: { items: { documentRef: string; browserHref: string }[] } }).data;
      assert.equal(
        page.items.map((d) => d.documentRef),
        [documentRef],
      );
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw serve through tsx: --json first line, banner-free stdout, browserHref on the server URL, clean exit on SIGTERM', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'transports/http/cli.ts', 'serve', '--port', '0', '--json', '--storage', 'memory', '--seed', 'demo'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  try {
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      new Promise<string>((done) => lines.once('line', done)),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no line within 10 s: ${stderr}`)), 10_000)),
    ]);
    assert.match(first, /^\{"url":"http:\/\/127\.0\.0\.1:\d+","operatorKey":"[A-Za-z0-9_-]+","demo":\{"token":"svc_agent_v1_scred_[a-f0-9]{24}_[A-Za-z0-9_-]+"\}\}$/);
    const { url, demo } = JSON.parse(first) as { url: string; demo: { token: string } };
    const res = await fetch(`${url}/api/v1/documents`, { headers: { authorization: `Bearer ${demo.token}` } });
    assert.is(res.status, 200);
    const items = ((await res.json()) as { data: { items: { browserHref: string }[] } }).data.items;
    assert.ok(items[0]!.browserHref.startsWith(`${url}/`), items[0]!.browserHref);
    child.kill('SIGTERM');
    assert.is(await exited, 0, stderr);
  } finally {
    child.kill('SIGKILL');
  }
});

test('kw serve without --json prints where it listens, the demo token and a curl line', async () => {
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--seed', 'demo'], io);
  try {
    const text = out.join('\n');
    assert.ok(text.includes(`listening on ${server.url}`));
    assert.ok(text.includes(`operator key: ${server.operatorKey}`));
    assert.ok(text.includes(server.demo!.token));
    assert.ok(text.includes(`curl -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`));
  } finally {
    await server.close();
  }
});

test.run();
