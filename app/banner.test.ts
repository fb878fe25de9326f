/**
 * Day two with the dev server (issue 29, items 1-3): every command `kw serve` prints runs verbatim in
 * bash with curl and jq, in order (later ones use the variables earlier ones set); the dev server's
 * budget window is 1 minute while an engine created in code keeps 24 hours; a spent demo token is said
 * so in the banner, with a command making a fresh one; the README tour shows an error instead of
 * nulls; the generated operator key is kept in the data folder (0600) and `kw sign-in` prints a fresh
 * link for the server holding a folder.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createEngine } from '../src/engine.ts';
import { memoryStorage } from '../adapters/memory/index.ts';
import { main, startServe, type CliIO } from './cli.ts';
import { OPERATOR_KEY_FILE, SERVER_RECORD_FILE, serve, type DevServer } from './serve.ts';

const root = resolve(import.meta.dirname, '..');

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

/** The commands of a banner: its lines indented by four spaces. */
const commandsOf = (lines: string[]) => lines.filter((l) => l.startsWith('    ')).map((l) => l.slice(4));

interface Ran {
  command: string;
  rc: number;
  output: string;
}

/** Run `commands` one after the other in one bash (variables carry over), each one's output and exit code apart. */
function runInBash(commands: string[], cwd: string, timeoutMs = 120_000): Promise<Ran[]> {
  const script = ['exec 2>&1', ...commands.flatMap((c, i) => [c, `rc=$?; printf '\\n::done ${i} %s\\n' $rc`])].join('\n');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, TOKEN: '', JOB: '', REVIEW: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      const ran: Ran[] = [];
      let rest = text;
      for (let i = 0; i < commands.length; i++) {
        const m = new RegExp(`(?:^|\\n)::done ${i} (\\d+)\\n`).exec(rest);
        if (!m) return reject(new Error(`bash stopped before command ${i} (${commands[i]}) ended:\n${text}`));
        ran.push({ command: commands[i]!, rc: Number(m[1]), output: rest.slice(0, m.index) });
        rest = rest.slice(m.index + m[0].length);
      }
      resolvePromise(ran);
    });
  });
}

/** Every command succeeded (a `--max-time` event stream ends with curl's 28) and no jq filter failed. */
function assertAllRan(ran: Ran[]): void {
  for (const r of ran) {
    const expected = r.command.includes('--max-time') ? [0, 28] : [0];
    assert.ok(expected.includes(r.rc), `exit ${r.rc} from: ${r.command}\n${r.output}`);
    assert.not.match(r.output, /jq: error|parse error|command not found|"error":/, `${r.command}\n${r.output}`);
  }
}

const find = (ran: Ran[], part: string) => {
  const r = ran.find((x) => x.command.includes(part));
  assert.ok(r, `no printed command contains ${part}`);
  return r!;
};

test('every command a seeded dev server with the fixture runner prints runs verbatim in bash: auth, read, sign-in, start a job, follow its events, decide its review', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-banner-'));
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--data', dir, '--seed', 'demo', '--research-runner', 'fixture', '--quiet'], io);
  try {
    const commands = commandsOf(out);
    assert.not.match(out.join('\n'), /uuidgen|\$\(uuid/);
    const ran = await runInBash(commands, root);
    assertAllRan(ran);
    assert.match(find(ran, '/api/v1/auth').output, /"windowMs":60000/);
    assert.match(find(ran, '?format=markdown').output, /^# /m);
    assert.match(find(ran, 'sign-in').output, new RegExp(`^${server.url}/sign-in/\\S+$`, 'm'));
    const events = find(ran, '/events').output;
    assert.match(events, /^event: research-job\ndata: .*"kind":"job.phase"/m, events);
    assert.match(events, /requesting-review/, events);
    assert.match(find(ran, '/decisions').output, /"accepted"/);
    // The review decided by the printed command ends the job: succeeded.
    const jobId = /"jobId":"(kjob_[a-f0-9]{48})"/.exec(events)?.[1];
    assert.ok(jobId, events);
    const deadline = Date.now() + 10_000;
    let state = '';
    while (Date.now() < deadline && state !== 'succeeded') {
      const res = await fetch(`${server.url}/api/v1/research-jobs/${jobId}`, { headers: { authorization: `Bearer ${server.demo!.token}` } });
      state = ((await res.json()) as { data: { state: string } }).data.state;
      if (state !== 'succeeded') await new Promise((r) => setTimeout(r, 100));
    }
    assert.is(state, 'succeeded');
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('without a seed the printed commands make a token (kw token create through npm) and use it; memory storage prints kw sign-in --url', async () => {
  const { io, out } = captureIO();
  const server = await startServe(['--port', '0', '--storage', 'memory', '--research-runner', 'fixture', '--quiet'], io);
  try {
    const commands = commandsOf(out);
    assert.ok(commands[0]!.startsWith('export TOKEN=$('), commands[0]);
    const ran = await runInBash(commands, root);
    assertAllRan(ran);
    assert.match(find(ran, '/api/v1/auth').output, /"request":\{"limit":10000/);
    assert.match(find(ran, 'sign-in --url').output, new RegExp(`^${server.url}/sign-in/\\S+$`, 'm'));
    assert.match(find(ran, '/decisions').output, /"accepted"/);
  } finally {
    await server.close();
  }
});

test('the dev server renews budgets every minute by default; an engine created in code keeps 24 hours', async () => {
  const server = await serve({ port: 0, storage: 'memory', seed: 'demo' });
  try {
    assert.is(server.budgetWindowMs, 60_000);
    const res = await fetch(`${server.url}/api/v1/auth`, { headers: { authorization: `Bearer ${server.demo!.token}` } });
    const body = (await res.json()) as { data: { budgets: { request: { windowMs: number } } } };
    assert.is(body.data.budgets.request.windowMs, 60_000);
  } finally {
    await server.close();
  }
  const engine = createEngine({ storage: memoryStorage() });
  try {
    const { credential } = await engine.credentials.create({ label: 'in code', scopes: ['document:read'] });
    const status = engine.credentials.budget(credential);
    assert.is(status.windowEnd - status.windowStart, 24 * 3600_000);
  } finally {
    await engine.close();
  }
});

/** Spend the whole budget of `token` on `server` (in the engine: 10,000 HTTP requests would take long). */
async function spend(server: DevServer, token: string): Promise<void> {
  const credential = await server.engine.credentials.authenticate(token);
  for (let spent = server.engine.credentials.budget(credential).remaining; spent > 0; spent--) server.engine.credentials.charge(credential);
  assert.is(server.engine.credentials.budget(credential).remaining, 0);
}

test('a spent demo token: the banner says so and until when, prints a command making a fresh token that works, and the README tour shows the error instead of nulls', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-spent-'));
  const data = join(dir, '.kw-data');
  try {
    const first = await serve({ port: 0, data, seed: 'demo', budgetWindowMs: 3600_000 });
    const token = first.demo!.token;
    try {
      await spend(first, token);
    } finally {
      await first.close(); // a graceful stop keeps every charge
    }
    const { io, out } = captureIO();
    const server = await startServe(['--port', '0', '--data', data, '--seed', 'demo', '--budget-window', '1h', '--quiet'], io);
    try {
      const text = out.join('\n');
      assert.match(text, /the demo token .* has spent its request budget/);
      assert.match(text, new RegExp(`until ${server.demoBudget!.resetsAt.replace(/[.]/g, '\\.')}; wait until then, or make a fresh token`));
      assert.not.ok(text.includes(`export TOKEN=${token}`), 'the spent token is not offered as the one to use');
      const ran = await runInBash(commandsOf(out), root);
      assertAllRan(ran);
      assert.match(find(ran, '/api/v1/auth').output, /"remaining":9999/, 'the fresh token works');

      // The README tour, verbatim but for the port, in a folder whose .kw-data is the server's.
      const readme = await readFile(join(root, 'README.md'), 'utf8');
      const tour = /## A five-minute tour over HTTP[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!.replaceAll('http://127.0.0.1:8787', server.url);
      const [spentRun] = await runInBash([tour], dir);
      assert.match(spentRun!.output, /RATE_LIMITED/, spentRun!.output);
      assert.not.match(spentRun!.output, /\[null,null\]|^null$/m, spentRun!.output);
    } finally {
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the README tour runs verbatim (but for the port) against a fresh seeded server', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-tour-'));
  const server = await serve({ port: 0, data: join(dir, '.kw-data'), seed: 'demo' });
  try {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const tour = /## A five-minute tour over HTTP[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!.replaceAll('http://127.0.0.1:8787', server.url);
    const [run] = await runInBash([tour], dir);
    assert.is(run!.rc, 0, run!.output);
    assert.not.match(run!.output, /null|"error"|jq: error/, run!.output);
    assert.match(run!.output, /\["created",\["[^"]+","[^"]+"\]\]/, run!.output);
    assert.match(run!.output, /^replayed$/m);
    assert.match(run!.output, /^# Findings$/m);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a generated operator key is kept in the lowdb data folder (0600) and reused; a given one is never written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-opkey-'));
  try {
    const first = await serve({ port: 0, data: dir });
    const key = first.operatorKey;
    try {
      assert.ok(first.operatorKeyGenerated);
      assert.not.ok(first.operatorKeyReused);
      assert.is((await readFile(join(dir, OPERATOR_KEY_FILE), 'utf8')).trim(), key);
      assert.is((await stat(join(dir, OPERATOR_KEY_FILE))).mode & 0o777, 0o600);
      assert.is((await stat(join(dir, SERVER_RECORD_FILE))).mode & 0o777, 0o600);
    } finally {
      await first.close();
    }
    assert.not.ok(await stat(join(dir, SERVER_RECORD_FILE)).catch(() => null), 'the server record goes with the server');
    const again = await serve({ port: 0, data: dir });
    try {
      assert.is(again.operatorKey, key);
      assert.ok(again.operatorKeyReused);
      const res = await fetch(`${again.url}/operator/v1/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      assert.is(res.status, 201);
    } finally {
      await again.close();
    }
    const given = await serve({ port: 0, data: dir, operatorKey: 'a-key-given-by-the-person' });
    try {
      assert.is(given.operatorKey, 'a-key-given-by-the-person');
      assert.is((await readFile(join(dir, OPERATOR_KEY_FILE), 'utf8')).trim(), key, 'the kept key is not replaced by a given one');
    } finally {
      await given.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kw sign-in prints a fresh one-time link for the server holding ./.kw-data, --data DIR or --url with --operator-key; no server: exit 1 saying so', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-signin-'));
  const cwd = process.cwd();
  try {
    const data = join(dir, '.kw-data');
    await mkdir(data);
    const server = await serve({ port: 0, data, seed: 'demo' });
    try {
      process.chdir(dir); // the default folder is ./.kw-data
      const links: string[] = [];
      for (const args of [['sign-in'], ['sign-in', '--data', data], ['sign-in', '--url', server.url, '--operator-key', server.operatorKey]]) {
        const { io, out, err } = captureIO();
        assert.is(await main(args, io), 0, err.join('\n'));
        assert.is(out.length, 1);
        assert.match(out[0]!, new RegExp(`^${server.url}/sign-in/[A-Za-z0-9_-]+$`));
        links.push(out[0]!);
      }
      assert.is(new Set(links).size, 3, 'each link is fresh');
      // The link signs in once.
      const first = await fetch(links[0]!, { redirect: 'manual' });
      assert.ok(first.status === 303 || first.status === 302, String(first.status));
      assert.match(first.headers.get('set-cookie') ?? '', /=/);
      assert.is((await fetch(links[0]!, { redirect: 'manual' })).status, 401);
      // A wrong key is refused by the server, and said so.
      const wrong = captureIO();
      assert.is(await main(['sign-in', '--url', server.url, '--operator-key', 'not-the-operator-key-at-all'], wrong.io), 1);
      assert.match(wrong.err.join('\n'), /401 AUTH_REQUIRED/);
      const usage = captureIO();
      assert.is(await main(['sign-in', '--url', server.url], usage.io), 2);
    } finally {
      process.chdir(cwd);
      await server.close();
    }
    const none = captureIO();
    assert.is(await main(['sign-in', '--data', data], none.io), 1);
    assert.match(none.err.join('\n'), /no server is running on /);
    const nothing = captureIO();
    assert.is(await main(['sign-in', '--data', join(dir, 'missing')], nothing.io), 1);
    assert.match(nothing.err.join('\n'), /no server is running on/);
  } finally {
    process.chdir(cwd);
    await rm(dir, { recursive: true, force: true });
  }
});

test('a key that begins with "-" (one generated key in 64 does) is read as the value of --operator-key, not as an option', async () => {
  const key = '-Qx3-a-key-that-begins-with-a-dash';
  const server = await serve({ port: 0, operatorKey: key });
  try {
    const { io, out, err } = captureIO();
    assert.is(await main(['sign-in', '--url', server.url, '--operator-key', key], io), 0, err.join('\n'));
    assert.match(out[0]!, new RegExp(`^${server.url}/sign-in/[A-Za-z0-9_-]+$`));
    const made = captureIO();
    assert.is(await main(['token', 'create', '--url', server.url, '--operator-key', key, '--scopes', 'document:read', '--json'], made.io), 0, made.err.join('\n'));
    // The next word is still an option when it is one of the command's own: the value is missing, said so.
    const missing = captureIO();
    assert.is(await main(['sign-in', '--operator-key', '--url', server.url], missing.io), 2);
    assert.match(missing.err.join('\n'), /--operator-key/);
  } finally {
    await server.close();
  }
});

test.run();
