/**
 * Helpers of the packaging test (scripts/package.test.ts): pack the package as `npm pack` does for a
 * publish, and install the tarball into an empty app without the network.
 * @remarks `npm ci` fills the npm cache with the tarballs of every locked package but not with the
 * registry's metadata, so a plain `npm install --offline <tgz>` cannot resolve the tarball's version
 * ranges. The app therefore gets a lockfile that pins the tarball's dependency closure to the
 * versions and integrities of this repository's lockfile; `npm install --offline <tgz>` then reads
 * everything from the cache.
 * @module
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** An entry of package-lock.json `packages`. */
interface LockEntry {
  version?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/** What {@link pack} made. */
export interface Packed {
  /** Absolute path of the tarball. */
  tarball: string;
  /** Every path inside the tarball, relative to the package folder. */
  files: string[];
}

/** `npm pack` (which runs `prepack`, the build) into `dir`. */
export async function pack(dir: string): Promise<Packed> {
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  // npm prints the prepack script's output before the JSON array.
  const json = JSON.parse(stdout.slice(stdout.lastIndexOf('\n[') + 1)) as { filename: string; files: { path: string }[] }[];
  const [info] = json;
  if (!info) throw new Error(`npm pack printed no result: ${stdout}`);
  return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path).sort() };
}

/** The lock entry a package named `name` resolves to from `from` (a lock path), node-style. */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | null {
  let base = from;
  for (;;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** The lock entries (path → entry) that installing `names` from the root needs. */
export function lockClosure(packages: Record<string, LockEntry>, names: string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const queue: [string, string][] = names.map((n) => ['', n]);
  while (queue.length) {
    const [from, name] = queue.shift()!;
    const path = resolveIn(packages, from, name);
    if (path === null) throw new Error(`${name} (needed by ${from || 'the app'}) is not in package-lock.json`);
    if (out[path]) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = packages[path]!;
    out[path] = entry;
    const requiredPeers = Object.keys(entry.peerDependencies ?? {}).filter((p) => !entry.peerDependenciesMeta?.[p]?.optional);
    for (const dep of [...Object.keys(entry.dependencies ?? {}), ...requiredPeers]) queue.push([path, dep]);
  }
  return out;
}

/**
 * Write an app in `dir` that depends on the tarball (and on `devPackages`, at this repository's
 * locked versions), with a lockfile pinning all of it, then `npm install --offline <tgz>`.
 * @throws when npm fails; the error carries npm's output.
 */
export async function installOffline(dir: string, tarball: string, devPackages: string[] = []): Promise<void> {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as LockEntry & { name: string; version: string; license: string };
  const spec = `file:${tarball}`;
  const devDependencies = Object.fromEntries(devPackages.map((n) => [n, lock.packages[`node_modules/${n}`]!.version!]));
  const app = { name: 'kw-consumer', version: '1.0.0', private: true, type: 'module', dependencies: { [manifest.name]: spec }, devDependencies };
  const ours: LockEntry = {
    version: manifest.version,
    resolved: spec,
    license: manifest.license,
    dependencies: manifest.dependencies ?? {},
    ...(manifest.peerDependencies ? { peerDependencies: manifest.peerDependencies, peerDependenciesMeta: manifest.peerDependenciesMeta } : {}),
    bin: manifest.bin,
    engines: manifest.engines,
  };
  const closure = lockClosure(lock.packages, [...Object.keys(manifest.dependencies ?? {}), ...devPackages]);
  for (const name of devPackages) closure[`node_modules/${name}`]!.dev = true;
  const packages = { '': { name: app.name, version: app.version, dependencies: app.dependencies, devDependencies }, [`node_modules/${manifest.name}`]: ours, ...closure };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(app, null, 2)}\n`);
  await writeFile(join(dir, 'package-lock.json'), `${JSON.stringify({ name: app.name, version: app.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
  await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
}
