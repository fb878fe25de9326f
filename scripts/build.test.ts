import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildCli } from './build.ts';

test('dist/kw.mjs runs alone: serve --json, answer GET /api/v1/auth with the demo token, exit 0 on SIGTERM', async () => {
  const buildDir = await mkdtemp(join(tmpdir(), 'kw-build-'));
  const runDir = await mkdtemp(join(tmpdir(), 'kw-run-'));
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const { outfile } = await buildCli({ outfile: join(buildDir, 'kw.mjs') });
    const head = (await readFile(outfile, 'utf8')).slice(0, 200);
    assert.ok(head.startsWith('#!/usr/bin/env node\n'), 'starts with the node hashbang');
    assert.ok(((await stat(outfile)).mode & 0o111) !== 0, 'is executable');
    const alone = join(runDir, 'kw.mjs');
    await copyFile(outfile, alone); // no node_modules anywhere near it

    child = spawn(process.execPath, [alone, 'serve', '--port', '0', '--json', '--storage', 'memory', '--seed', 'demo'], {
      cwd: runDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child!.on('exit', (code, signal) => done({ code, signal })),
    );
    const lines = createInterface({ input: child.stdout! });
    const first = await Promise.race([
      new Promise<string>((done) => lines.once('line', done)),
      exited.then(({ code }) => Promise.reject(new Error(`kw exited early with ${code}: ${stderr}`))),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no JSON line within 8 s: ${stderr}`)), 8000)),
    ]);
    const banner = JSON.parse(first) as { url: string; operatorKey: string; demo: { token: string } | null; signInUrl: string };
    assert.equal(Object.keys(banner), ['url', 'operatorKey', 'demo', 'signInUrl']);
    const signIn = await fetch(banner.signInUrl, { redirect: 'manual' });
    assert.is(signIn.status, 303, 'the bundled browser app signs in');
    assert.match(banner.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(banner.demo?.token.startsWith('svc_agent_v1_scred_'));

    const res = await fetch(`${banner.url}/api/v1/auth`, { headers: { authorization: `Bearer ${banner.demo!.token}` } });
    assert.is(res.status, 200);
    const body = (await res.json()) as { data: { label: string; scopes: string[] } };
    assert.is(body.data.label, 'Demo agent');

    // A library upload is read on a capture thread: the bundle is its own thread entry.
    const auth = { authorization: `Bearer ${banner.demo!.token}`, 'content-type': 'application/json' };
    const page = new TextEncoder().encode('<!doctype html><html><head><title>Bundled</title></head><body><article><p>Read on a capture thread of the bundle.</p></article></body></html>');
    const library = async (command: object) => (await (await fetch(`${banner.url}/api/v1/library`, { method: 'POST', headers: auth, body: JSON.stringify(command) })).json()) as { data: any };
    const prepared = await library({ type: 'prepare-upload', fileName: 'page.html', contentType: 'text/html', byteLength: page.length, idempotencyKey: 'build-test-upload-0001' });
    const put = await fetch(`${banner.url}${prepared.data.upload.path}`, { method: 'PUT', headers: { authorization: auth.authorization }, body: page });
    assert.is(put.status, 200);
    const finished = await library({ type: 'finish-upload', uploadId: prepared.data.upload.uploadId, idempotencyKey: 'build-test-finish-0001' });
    let item = finished.data.item;
    for (let i = 0; i < 100 && item.capture.state === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      item = (await library({ type: 'get', itemId: item.itemId })).data.item;
    }
    assert.is(item.capture.state, 'ready', JSON.stringify(item.capture));
    assert.is(item.title, 'Bundled');

    child.kill('SIGTERM');
    const { code } = await exited;
    assert.is(code, 0, `clean exit (stderr: ${stderr})`);
    child = undefined;
  } finally {
    child?.kill('SIGKILL');
    await rm(buildDir, { recursive: true, force: true });
    await rm(runDir, { recursive: true, force: true });
  }
});

test.run();
