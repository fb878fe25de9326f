/**
 * Test kit: Debian's PgBouncer (`/usr/sbin/pgbouncer`) in `pool_mode = transaction` in front of the
 * PostgreSQL server at 127.0.0.1:5432, on a free loopback port, with its configuration in a temporary
 * folder. Every database name is passed through, so the kit's fresh databases are reachable.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ADMIN_URL, serverUnavailableReason } from './postgres-kit.ts';

/** Where Debian installs it (`apt-get install pgbouncer`); `KW_TEST_PGBOUNCER` names another. */
export const PGBOUNCER = process.env.KW_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

/** A running PgBouncer. */
export interface PgBouncer {
  /** `url` (a database URL of the server at 127.0.0.1:5432) rewritten to go through the pooler. */
  pooled(url: string): string;
  port: number;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Null when PgBouncer can run here (binary present, server answering), else why not (printed by tests that skip). */
export async function pgbouncerUnavailableReason(): Promise<string | null> {
  if (!existsSync(PGBOUNCER)) return `PgBouncer is not installed at ${PGBOUNCER} (Debian: apt-get install pgbouncer)`;
  return serverUnavailableReason();
}

/**
 * Starts PgBouncer in transaction pooling mode, trusting every user (loopback only). PgBouncer
 * refuses to run as root: as root it is started with `-u nobody` (its folder is made theirs to write).
 */
export async function startPgBouncer(options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-pgbouncer-'));
  const admin = new URL(ADMIN_URL);
  const user = decodeURIComponent(admin.username || 'postgres');
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`);
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${admin.hostname} port=${admin.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 1000',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await chmod(dir, 0o777);
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), ini], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const pooled = (url: string) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  // Ready once it answers a statement through the pool.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: pooled(ADMIN_URL), connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`PgBouncer did not start: ${(error as Error).message}; ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { pooled, port, stop };
}
