/**
 * The one test command (`npm test`): runs every `*.test.ts` under src/, adapters/, transports/, app/,
 * fixtures/, bench/ and scripts/ with uvu in one process, then prints the closing line CI reads:
 * `N passed, N failed` (and `, N skipped`). Optional arguments filter files by substring.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const dirs = ['src', 'adapters', 'transports', 'app', 'fixtures', 'bench', 'scripts'];
const filters = process.argv.slice(2);

function walk(dir: string, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
}

const files: string[] = [];
for (const d of dirs) walk(join(root, d), files);
files.sort();
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;

// Count what uvu reports while letting its output through.
let total = 0;
let passed = 0;
let skipped = 0;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  const t = /Total:\s+(\d+)/.exec(plain);
  const p = /Passed:\s+(\d+)/.exec(plain);
  const s = /Skipped:\s+(\d+)/.exec(plain);
  if (t) total = Number(t[1]);
  if (p) passed = Number(p[1]);
  if (s) skipped = Number(s[1]);
  return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

(globalThis as { UVU_DEFER?: number }).UVU_DEFER = 1;
const uvu = await import('uvu');
const queue = (globalThis as unknown as { UVU_QUEUE: unknown[][] }).UVU_QUEUE;
let loadFailures = 0;
let index = 0;
for (const file of selected) {
  (globalThis as { UVU_INDEX?: number }).UVU_INDEX = index++;
  queue.push([relative(root, file)]);
  try {
    await import(pathToFileURL(file).href);
  } catch (error) {
    loadFailures++;
    console.error(`could not load ${relative(root, file)}:`, error);
  }
}

const timeoutMs = Number(process.env.KW_TEST_TIMEOUT_MS ?? 600_000);
const timer = setTimeout(() => {
  console.error(`tests did not finish within ${timeoutMs} ms`);
  write(`${passed} passed, ${Math.max(1, total - passed)} failed\n`);
  process.exit(1);
}, timeoutMs);
timer.unref();

await uvu.exec(false);
const failed = total - passed + loadFailures;
clearTimeout(timer);
write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exitCode = failed > 0 || process.exitCode ? 1 : 0;
// Handles left open by a test (sockets, timers) must not keep CI waiting.
setTimeout(() => process.exit(process.exitCode ?? 0), 200).unref();
