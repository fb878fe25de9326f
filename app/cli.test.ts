import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { main, parseDuration, startServe, type CliIO } from './cli.ts';
import { serve } from './serve.ts';
import { KW, KW_QUIET } from './usage.ts';
import { VERSION } from './version.ts';

/** The command as hints print it, for regular expressions. */
const K = KW.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

const root = resolve(import.meta.dirname, '..');

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

test('a usage error prints one line on stderr naming the problem and the help command, and exits 2', async () => {
  const cases: [string[], RegExp][] = [
    [['serve', '--nope'], new RegExp(`^kw: unknown option --nope \\(see ${K} serve --help\\)$`)],
    [['serve', '--port', 'eighty'], new RegExp(`^kw: --port must be an integer from 0 to 65535, not "eighty" \\(see ${K} serve --help\\)$`)],
    [['serve', '--port', '70000'], /--port must be an integer/],
    [['serve', '--port'], /--port <value>' argument missing/],
    [['serve', '--storage', 'sqlite'], /--storage must be one of lowdb, memory, postgres, not "sqlite"/],
    [['serve', '--storage', 'postgres', '--data', 'x'], /--data needs --storage lowdb \(postgres keeps everything in the database\)/],
    [['serve', '--database-url', 'postgres://127.0.0.1/x'], /--database-url needs --storage postgres/],
    [['serve', '--seed', 'everything'], /--seed must be one of demo, none/],
    [['serve', '--budget-window', '10 minutes'], /--budget-window: "10 minutes" is not a duration/],
    [['serve', '--log', 'xml'], /--log must be one of text, json/],
    [['serve', '--quiet', '--log', 'json'], /--quiet and --log exclude each other/],
    [['serve', '--storage', 'memory', '--data', 'x'], /--data needs --storage lowdb/],
    [['serve', '--storage', 'memory', '--accept-data-loss'], /--accept-data-loss needs --storage lowdb/],
    [['serve', '--mcp-allowed-hosts', 'kw.lan,,x'], /--mcp-allowed-hosts takes host or host:port names/],
    [['serve', 'extra-positional'], new RegExp(`^kw: unexpected argument 'extra-positional' \\(see ${K} serve --help\\)$`)],
    [['token', 'create', '--url', 'http://127.0.0.1:1'], new RegExp(`--operator-key is required \\(see ${K} token create --help\\)$`)],
    [['token', 'create', '--url', 'http://127.0.0.1:1', '--operator-key', 'k', '--scopes', 'document:read', '--budget', '0'], /--budget must be an integer from 1 to 10000/],
    [['token'], /token needs a subcommand/],
    [['frobnicate'], new RegExp(`^kw: unknown command: frobnicate \\(see ${K} --help\\)$`)],
    [[], new RegExp(`^kw: no command given \\(see ${K} --help\\)$`)],
  ];
  for (const [argv, expected] of cases) {
    const { io, out, err } = captureIO();
    assert.is(await main(argv, io), 2, argv.join(' '));
    assert.is(out.length, 0, argv.join(' '));
    assert.is(err.length, 1, `one line for ${argv.join(' ')}: ${err.join(' | ')}`);
    assert.match(err[0]!, expected);
  }
});

test('help, per-command help and --version print on stdout and exit 0', async () => {
  const help = captureIO();
  assert.is(await main(['--help'], help.io), 0);
  assert.match(help.out.join('\n'), new RegExp(`Usage: ${K} <command>`));
  const serveHelp = captureIO();
  assert.is(await main(['serve', '--help'], serveHelp.io), 0);
  const text = serveHelp.out.join('\n');
  for (const flag of ['--port', '--data', '--seed', '--json', '--log', '--quiet', '--dev-open-document-pages']) assert.ok(text.includes(flag), flag);
  assert.match(text, /--dev-open-document-pages[^]*WITHOUT sign-in/);
  const tokenHelp = captureIO();
  assert.is(await main(['token', 'create', '-h'], tokenHelp.io), 0);
  assert.match(tokenHelp.out.join('\n'), /--operator-key KEY/);
  const version = captureIO();
  assert.is(await main(['--version'], version.io), 0);
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version.out, [pkg.version]);
  assert.is(VERSION, pkg.version);
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

test('a busy port says so and suggests --port 0 before anything is written to the data folder', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-busy-'));
  const occupant = await serve({ port: 0, storage: 'memory' });
  try {
    const data = join(dir, 'data');
    const { io, out, err } = captureIO();
    assert.is(await main(['serve', '--port', String(occupant.port), '--data', data, '--seed', 'demo'], io), 1);
    assert.is(out.length, 0);
    assert.is(err.length, 1);
    assert.match(err[0]!, new RegExp(`port ${occupant.port} on 127\\.0\\.0\\.1 is already in use.*${K} serve --port 0`));
    await stat(data).then(
      () => assert.unreachable('the data folder must not be created'),
      (e: NodeJS.ErrnoException) => assert.is(e.code, 'ENOENT'),
    );
  } finally {
    await occupant.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a data folder that is a file, or lies under one, is named in the error and the port is released', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-file-'));
  try {
    const file = join(dir, 'not-a-folder');
    await writeFile(file, 'x');
    for (const data of [file, join(file, 'below')]) {
      const { io, err } = captureIO();
      assert.is(await main(['serve', '--port', '0', '--data', data], io), 1);
      assert.is(err.length, 1);
      assert.ok(err[0]!.includes(`the data folder ${data} `), err[0]);
      assert.match(err[0]!, /--data/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw serve through tsx: --json first line, a request log line on stderr without the token, clean exit on SIGTERM', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/cli.ts', 'serve', '--port', '0', '--json', '--storage', 'memory', '--seed', 'demo', '--log', 'json'], {
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
      // A deadline for a hung start, not a speed target: a cold tsx cache on a busy machine takes >10 s.
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no line within 30 s: ${stderr}`)), 30_000)),
    ]);
    assert.match(first, /^\{"url":"http:\/\/127\.0\.0\.1:\d+","operatorKey":"[A-Za-z0-9_-]+","demo":\{"token":"svc_agent_v1_scred_[a-f0-9]{24}_[A-Za-z0-9_-]+"\},"signInUrl":"http:\/\/127\.0\.0\.1:\d+\/sign-in\/[A-Za-z0-9_-]{43}"\}$/);
    const { url, demo } = JSON.parse(first) as { url: string; demo: { token: string } };
    const res = await fetch(`${url}/api/v1/documents?limit=5&token=${demo.token}`, { headers: { authorization: `Bearer ${demo.token}` } });
    assert.is(res.status, 200);
    const items = ((await res.json()) as { data: { items: { browserHref: string }[] } }).data.items;
    assert.ok(items[0]!.browserHref.startsWith(`${url}/`), items[0]!.browserHref);
    child.kill('SIGTERM');
    assert.is(await exited, 0, stderr);
    const logged = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { method: string; path: string; status: number; requestId: string });
    assert.is(logged.length, 1, stderr);
    assert.is(logged[0]!.path, '/api/v1/documents?limit=5&token=***');
    assert.is(logged[0]!.status, 200);
    assert.ok(!stderr.includes(demo.token.slice(19)), 'the token never appears in the log');
  } finally {
    child.kill('SIGKILL');
  }
});

test('kw serve without --json prints where it listens, the demo token and a curl line; without a seed, a kw token create hint', async () => {
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--seed', 'demo', '--quiet'], io);
  try {
    const text = out.join('\n');
    assert.ok(text.includes(`listening on ${server.url}`));
    assert.ok(text.includes(`operator key: ${server.operatorKey}`));
    assert.ok(text.includes(server.demo!.token));
    assert.ok(text.includes(`curl -s -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/auth`));
    assert.ok(server.signInUrl?.startsWith(`${server.url}/sign-in/`));
    assert.ok(text.includes(`sign in to the console (one use, 15 minutes; account demo): ${server.signInUrl}`));
  } finally {
    await server.close();
  }
  const bare = captureIO();
  const plain = await startServe(['--port', '0', '--storage', 'memory', '--quiet'], bare.io);
  try {
    assert.ok(bare.out.some((l) => l.trim().startsWith(`export TOKEN=$(${KW_QUIET} token create --url ${plain.url} --operator-key ${plain.operatorKey}`)));
  } finally {
    await plain.close();
  }
});

test('without --dev-open-document-pages the browserHref page answers 401 with an HTML note pointing to the API', async () => {
  const server = await startServe(['--port', '0', '--storage', 'memory', '--seed', 'demo', '--quiet'], captureIO().io);
  try {
    const res = await fetch(`${server.url}/documents/${server.demo!.documentRef}`);
    assert.is(res.status, 401);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.ok(!html.includes('Getting started'), 'the private document is not shown');
    assert.match(html, /\/api\/v1\/documents/);
  } finally {
    await server.close();
  }
});

test('--dev-open-document-pages serves the browserHref page of a private document without sign-in, and the banner warns', async () => {
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--seed', 'demo', '--quiet', '--dev-open-document-pages'], io);
  try {
    assert.ok(out.some((l) => l.includes('WARNING --dev-open-document-pages')));
    const res = await fetch(`${server.url}/documents/${server.demo!.documentRef}`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /Getting started/);
  } finally {
    await server.close();
  }
});

test.run();
