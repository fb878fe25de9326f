/**
 * `npm start` stopped by its pid stops the server: the start script execs node with tsx as a loader
 * (one process, no shell or tsx parent in between), so the signal npm passes on reaches the server,
 * which closes the port and releases the data folder's lock.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serve } from './serve.ts';

const root = resolve(import.meta.dirname, '..');

const refused = (url: string) =>
  fetch(`${url}/openapi.json`).then(
    () => false,
    () => true,
  );

test('npm start, killed by its pid (SIGTERM), releases the port and the data folder lock', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-npm-start-'));
  const child = spawn('npm', ['start', '--silent', '--', '--port', '0', '--data', dir, '--json', '--quiet'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  try {
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>((done, fail) => {
      lines.on('line', (l) => l.startsWith('{') && done(l));
      child.on('exit', () => fail(new Error(`npm start ended before listening: ${stderr}`)));
    });
    const { url } = JSON.parse(first) as { url: string };
    assert.is((await fetch(`${url}/openapi.json`)).status, 200);
    await access(join(dir, 'LOCK'));

    child.kill('SIGTERM'); // the pid of npm, as `kill $!` after `npm start &`
    await exited;
    // The server behind npm stops too: poll until the port refuses and the lock is gone.
    let free = false;
    for (let i = 0; i < 200 && !free; i++) {
      free = (await refused(url)) && (await access(join(dir, 'LOCK')).then(() => false, () => true));
      if (!free) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(free, `the port and the lock are released (${stderr})`);
    const next = await serve({ port: 0, data: dir });
    await next.close();
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
