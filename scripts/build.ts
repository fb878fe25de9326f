/**
 * `npm run build`: bundle the `kw` command line (app/cli.ts) and everything it imports
 * into the single file `dist/kw.mjs`, which runs with plain `node` and no node_modules.
 *
 * Usage: `tsx scripts/build.ts [--outfile PATH]`.
 * @module
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');

/**
 * The banner: a node hashbang, and a `require` for the CommonJS dependencies bundled into this ES
 * module (esbuild's `__require` shim looks for a global `require`).
 */
const BANNER = [
  '#!/usr/bin/env node',
  "import { createRequire as __kwCreateRequire } from 'node:module';",
  'const require = __kwCreateRequire(import.meta.url);',
].join('\n');

/** Options of {@link buildCli}. */
export interface BuildOptions {
  /** Output file; default `dist/kw.mjs` under the project root. */
  outfile?: string;
  /** Minify (default false: the bundle stays readable in stack traces). */
  minify?: boolean;
}

/** Bundle the CLI into one ES module file; resolves with its path and size. */
export async function buildCli(options: BuildOptions = {}): Promise<{ outfile: string; bytes: number }> {
  const outfile = resolve(options.outfile ?? resolve(root, 'dist/kw.mjs'));
  const result = await build({
    entryPoints: [resolve(root, 'app/cli.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: options.minify ?? false,
    legalComments: 'none',
    write: false,
    outfile,
    logLevel: 'warning',
  });
  const file = result.outputFiles.find((f) => f.path === outfile) ?? result.outputFiles[0]!;
  // The entry's own hashbang runs it through tsx; the bundle runs with node, so it is replaced.
  const code = file.text.replace(/^#![^\n]*\n/, '');
  await mkdir(dirname(outfile), { recursive: true });
  await writeFile(outfile, `${BANNER}\n${code}`);
  await chmod(outfile, 0o755);
  return { outfile, bytes: Buffer.byteLength(code) + BANNER.length + 1 };
}

function isEntryPoint(): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
}

if (isEntryPoint()) {
  const { values } = parseArgs({ options: { outfile: { type: 'string' }, minify: { type: 'boolean' } } });
  const out = await buildCli({
    ...(values.outfile === undefined ? {} : { outfile: values.outfile }),
    ...(values.minify === undefined ? {} : { minify: values.minify }),
  });
  console.log(`built ${relative(process.cwd(), out.outfile) || out.outfile} (${(out.bytes / 1024).toFixed(0)} KB)`);
}
