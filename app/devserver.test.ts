/**
 * The dev server an agent developer lives in: the local person's account, KW_OPERATOR_KEY, `kw reset`,
 * the operator key's 401 message, every command's --help, the banner's /mcp line, the home page and
 * the library command in the request log.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { main, startServe, type CliIO } from './cli.ts';
import { runReset } from './reset-command.ts';
import { serveOptionsFrom } from './serve-command.ts';
import { serve } from './serve.ts';

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

const KEY = 'operator-key-from-the-environment';

async function tokenCreate(url: string, operatorKey: string, extra: string[] = []): Promise<{ token: string; accountId: string }> {
  const { io, out, err } = captureIO();
  assert.is(await main(['token', 'create', '--url', url, '--operator-key', operatorKey, '--scopes', 'document:read', '--json', ...extra], io), 0, err.join('\n'));
  return JSON.parse(out[0]!) as { token: string; accountId: string };
}

async function documentRefsOf(url: string, token: string): Promise<string[]> {
  const res = await fetch(`${url}/api/v1/documents`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(res.status, 200);
  return ((await res.json()) as { data: { items: { documentRef: string }[] } }).data.items.map((d) => d.documentRef);
}

test('kw token create without --account makes a token of the local person: demo when seeded (it sees the demo data), else owner', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-local-'));
  try {
    const seeded = await serve({ port: 0, data: dir, seed: 'demo' });
    try {
      assert.is(seeded.localAccount, 'demo');
      const made = await tokenCreate(seeded.url, seeded.operatorKey);
      assert.is(made.accountId, 'demo');
      assert.ok((await documentRefsOf(seeded.url, made.token)).includes(seeded.demo!.documentRef), 'the token sees the demo document');
      // An explicit account still wins.
      assert.is((await tokenCreate(seeded.url, seeded.operatorKey, ['--account', 'acme'])).accountId, 'acme');
    } finally {
      await seeded.close();
    }
    // The same folder started again without --seed: its data were seeded, so the person is still demo.
    const again = await serve({ port: 0, data: dir });
    try {
      assert.is(again.localAccount, 'demo');
      assert.is((await tokenCreate(again.url, again.operatorKey)).accountId, 'demo');
    } finally {
      await again.close();
    }
    const plain = await serve({ port: 0, storage: 'memory' });
    try {
      assert.is(plain.localAccount, 'owner');
      assert.is((await tokenCreate(plain.url, plain.operatorKey)).accountId, 'owner');
    } finally {
      await plain.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('KW_OPERATOR_KEY gives the operator key with every storage when --operator-key is absent; the flag wins; a short one is a usage error', async () => {
  const silent = captureIO().io;
  const env = { KW_OPERATOR_KEY: KEY };
  assert.is(serveOptionsFrom(['--storage', 'memory'], silent, env).operatorKey, KEY);
  assert.is(serveOptionsFrom(['--storage', 'lowdb', '--data', 'x'], silent, env).operatorKey, KEY);
  assert.is(serveOptionsFrom(['--operator-key', 'a-flag-key-of-16-chars'], silent, env).operatorKey, 'a-flag-key-of-16-chars');
  assert.is(serveOptionsFrom([], silent, {}).operatorKey, undefined);
  assert.throws(() => serveOptionsFrom([], silent, { KW_OPERATOR_KEY: 'short' }), /KW_OPERATOR_KEY must be at least 16 characters/);

  const dir = await mkdtemp(join(tmpdir(), 'kw-envkey-'));
  const saved = process.env.KW_OPERATOR_KEY;
  process.env.KW_OPERATOR_KEY = KEY;
  try {
    for (const args of [['--storage', 'memory'], ['--data', dir]]) {
      const { io, out } = captureIO();
      const server = await startServe(['--port', '0', '--quiet', ...args], io);
      try {
        assert.is(server.operatorKey, KEY);
        assert.is(server.operatorKeyGenerated, false);
        assert.ok(!out.join('\n').includes('(generated'), 'a given key is not called generated');
        // kw token create takes the key from the environment too.
        const { io: tio, out: tout, err: terr } = captureIO();
        assert.is(await main(['token', 'create', '--url', server.url, '--scopes', 'document:read', '--json'], tio), 0, terr.join('\n'));
        assert.match(tout[0]!, /"token":"svc_agent_v1_scred_/);
      } finally {
        await server.close();
      }
    }
  } finally {
    if (saved === undefined) delete process.env.KW_OPERATOR_KEY;
    else process.env.KW_OPERATOR_KEY = saved;
    await rm(dir, { recursive: true, force: true });
  }
});

test('a generated key is printed as generated when neither the flag nor KW_OPERATOR_KEY is given', async () => {
  const saved = process.env.KW_OPERATOR_KEY;
  delete process.env.KW_OPERATOR_KEY;
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--quiet'], io);
  try {
    assert.is(server.operatorKeyGenerated, true);
    assert.ok(out.some((l) => l.includes(`operator key: ${server.operatorKey}  (generated`)));
  } finally {
    await server.close();
    if (saved !== undefined) process.env.KW_OPERATOR_KEY = saved;
  }
});

test('kw reset is refused while a server holds the folder (naming its pid), empties it after, and the next start seeds anew', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-reset-'));
  try {
    const server = await serve({ port: 0, data: dir, seed: 'demo' });
    const firstToken = server.demo!.token;
    try {
      const { io, err } = captureIO();
      assert.is(await runReset(['--data', dir, '--yes'], io), 1);
      assert.match(err.join('\n'), new RegExp(`in use by a running server \\(pid ${process.pid}\\)`));
      assert.ok((await readdir(dir)).includes('checkpoint.json') || (await readdir(dir)).some((n) => n.startsWith('journal-')), 'nothing removed');
    } finally {
      await server.close();
    }
    // Without --yes and nobody to ask: refused, nothing removed.
    const asked: string[] = [];
    const no = captureIO();
    assert.is(await runReset(['--data', dir], no.io, async (q) => (asked.push(q), false)), 1);
    assert.is(asked.length, 1);
    assert.match(no.err.join('\n'), /add --yes/);
    assert.ok((await readdir(dir)).includes('demo-seed.json'));

    const yes = captureIO();
    assert.is(await runReset(['--data', dir, '--yes'], yes.io), 0, yes.err.join('\n'));
    assert.equal(await readdir(dir), []);
    assert.match(yes.out.join('\n'), /reset .* files? removed/);

    const fresh = await serve({ port: 0, data: dir, seed: 'demo' });
    try {
      assert.is(fresh.demoSeededNow, true);
      assert.is.not(fresh.demo!.token, firstToken);
      const old = await fetch(`${fresh.url}/api/v1/auth`, { headers: { authorization: `Bearer ${firstToken}` } });
      assert.is(old.status, 401, 'the old credential is gone');
    } finally {
      await fresh.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw reset refuses a folder holding files kw serve does not write, and needs --data', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-reset-foreign-'));
  try {
    await writeFile(join(dir, 'thesis.tex'), 'precious');
    const { io, err } = captureIO();
    assert.is(await runReset(['--data', dir, '--yes'], io), 1);
    assert.match(err.join('\n'), /is not a kw data folder \(it holds thesis\.tex/);
    assert.equal(await readdir(dir), ['thesis.tex']);
    const usage = captureIO();
    assert.is(await main(['reset', '--yes'], usage.io), 2);
    assert.match(usage.err[0]!, /--data is required/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a wrong operator key answers 401 saying the operator key does not match', async () => {
  const server = await serve({ port: 0, storage: 'memory', operatorKey: 'the-right-operator-key' });
  try {
    const res = await fetch(`${server.url}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: 'Bearer the-wrong-operator-key', 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'x', scopes: ['document:read'] }),
    });
    assert.is(res.status, 401);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.is(body.error.code, 'AUTH_REQUIRED');
    assert.match(body.error.message, /operator key does not match/);
    const none = await fetch(`${server.url}/operator/v1/activation`);
    assert.is(none.status, 401);
    assert.match(((await none.json()) as { error: { message: string } }).error.message, /needs Authorization: Bearer <operator key>/);
  } finally {
    await server.close();
  }
});

test('every command and subcommand answers --help on stdout with exit 0', async () => {
  const cases: [string[], RegExp][] = [
    [['--help'], /<command>/],
    [['help'], /<command>/],
    [['serve', '--help'], /--research-runner none\|fixture/],
    [['mcp', '--help'], /mcp/],
    [['token', '--help'], /token <subcommand>[^]*create/],
    [['token', '-h'], /token <subcommand>/],
    [['token', 'create', '--help'], /--operator-key KEY/],
    [['reset', '--help'], /reset --data DIR \[--yes\]/],
  ];
  for (const [argv, expected] of cases) {
    const { io, out, err } = captureIO();
    assert.is(await main(argv, io), 0, argv.join(' '));
    assert.is(err.length, 0, argv.join(' '));
    assert.match(out.join('\n'), expected);
  }
});

test('the banner prints the /mcp URL and, with the fixture runner, how to drive it', async () => {
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--quiet', '--research-runner', 'fixture'], io);
  try {
    const text = out.join('\n');
    assert.ok(text.includes(`MCP (streamable HTTP): ${server.url}/mcp`), text);
    assert.match(text, /research runner: fixture/);
    assert.ok(text.includes(`${server.url}/operator/v1/reviews/$REVIEW/decisions`));
    assert.ok(text.includes(`${server.url}/api/v1/research-jobs`));
  } finally {
    await server.close();
  }
});

test('GET / answers a small HTML page linking the OpenAPI document, the operations and /mcp (without the browser app; with it, the console)', async () => {
  const withApp = await serve({ port: 0, storage: 'memory' });
  try {
    const res = await fetch(`${withApp.url}/`);
    assert.is(res.status, 401, 'the browser app replaces it: signed out, the console says how to sign in');
    assert.match(await res.text(), /sign-in/i);
  } finally {
    await withApp.close();
  }
  const server = await serve({ port: 0, storage: 'memory', browserApp: false });
  try {
    const res = await fetch(`${server.url}/`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /href="openapi\.json"/);
    assert.match(html, /\/mcp/);
    assert.match(html, /POST \/api\/v1\/documents/);
    assert.ok(!html.includes('/operator/v1'), 'the operator API is not advertised');
  } finally {
    await server.close();
  }
});

test('the request log names the library command type', async () => {
  const lines: string[] = [];
  const server = await serve({ port: 0, storage: 'memory', requestLog: { write: (l) => lines.push(l), format: 'text' } });
  try {
    const cred = await fetch(`${server.url}/operator/v1/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'lib', scopes: ['library:read', 'library:write'] }),
    });
    const token = ((await cred.json()) as { data: { token: string } }).data.token;
    // A loopback link: the capture refuses it (no --capture-allow-private), so nothing is fetched.
    const res = await fetch(`${server.url}/api/v1/library`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'save-link', url: 'http://127.0.0.1:9/article', idempotencyKey: 'request-log-save-link-0001' }),
    });
    assert.is(res.status, 201);
    const line = lines.find((l) => l.includes('/api/v1/library'));
    assert.match(line!, / POST \/api\/v1\/library \(save-link\) 201 /);
    assert.ok(lines.some((l) => / POST \/operator\/v1\/credentials 201 /.test(l)), 'other lines carry no command');
  } finally {
    await server.close();
  }
});



test('the succeeded demo job names its inquiry in artifacts.inquiry (the released inquiry artifact)', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo' });
  try {
    const jobId = server.demo!.jobs!.succeeded;
    const res = await fetch(`${server.url}/api/v1/research-jobs/${jobId}`, { headers: { authorization: `Bearer ${server.demo!.token}` } });
    assert.is(res.status, 200);
    const job = ((await res.json()) as { data: { state: string; artifacts: { inquiry: { inquiryId: string } | null; publicArtifacts: { kind: string; artifactId: string }[] } } }).data;
    assert.is(job.state, 'succeeded');
    assert.ok(job.artifacts.inquiry, 'artifacts.inquiry is set');
    const released = job.artifacts.publicArtifacts.find((a) => a.kind === 'inquiry');
    assert.is(released?.artifactId, job.artifacts.inquiry!.inquiryId);
  } finally {
    await server.close();
  }
});
test.run();
