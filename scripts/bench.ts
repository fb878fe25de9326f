/**
 * Runs the benchmarks on bundled code: esbuild bundles bench/index.ts (as `npm run build` bundles the
 * server), then plain `node --expose-gc` runs it. Arguments pass through (`bundle`, `mutations`, `scaling`,
 * `pathological`, `peer`, `http`, or `profile [blocks] [kind] [seconds]`; `--report FILE.html`). With `KW_BENCH_CPU_PROF=DIR` node
 * writes a CPU profile of the run into DIR (`--cpu-prof`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
// Inside node_modules so that the external packages resolve from the bundle.
const outdir = join(root, 'node_modules', '.cache', 'kw-bench');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, 'bench.mjs');
await build({
  // The capture extraction threads' entry is bundled beside the bench, where the pool looks for it.
  entryPoints: { bench: join(root, 'bench', 'index.ts'), 'extract-worker': join(root, 'adapters', 'capture', 'extract-worker.ts') },
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
const profileDir = process.env.KW_BENCH_CPU_PROF;
const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
// The peer baseline (bench/peer) has its own packages, installed on demand; node resolves them from there.
const peer = join(root, 'bench', 'peer');
// KW_BENCH_ROOT: the checkout the bench was built from, where the `kw serve` children it starts run
// (the bundle sits in node_modules/.cache, which a git worktree may share with another checkout).
const env: NodeJS.ProcessEnv = { ...process.env, KW_BENCH_ROOT: root };
if (existsSync(join(peer, 'node_modules'))) env.KW_BENCH_PEER = pathToFileURL(join(peer, 'peer.mjs')).href;
const run = spawnSync(process.execPath, ['--expose-gc', ...profile, outfile, ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
