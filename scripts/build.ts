/**
 * `npm run build`: what the package ships, into dist/ (emptied first).
 * - The library: every non-test module under the public entries' folders (tsconfig.build.json)
 *   compiled by tsc to ES modules with `.d.ts` beside them; `rewriteRelativeImportExtensions` turns
 *   the source's `.ts` imports into `.js`, and the same rewrite is applied to the declarations (tsc
 *   leaves their specifiers as written).
 * - The `kw` command: app/cli.ts and everything it imports bundled by esbuild into the single file
 *   `dist/kw.mjs` with a node hashbang, which runs with plain `node` and no node_modules.
 * - The document page's editor: transports/web/editor/client.ts bundled once into `dist/editor/` (editor.js,
 *   editor.css, content-hashed chunks) with app/editor-bundle.ts's options; `kw` serves it from there.
 *
 * Type errors are `npm run typecheck`'s to report; the build fails on what stops a correct emit
 * (configuration, syntax, declaration emit). Usage: `tsx scripts/build.ts [--outfile PATH]`.
 * @module
 */
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import ts from 'typescript';
import { editorBuildOptions } from '../app/editor-bundle.ts';

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
    // The bundle starts its capture extraction threads on itself (adapters/capture/extract-pool.ts).
    define: { __KW_BUNDLED_CAPTURE_WORKER__: 'true' },
    write: false,
    outfile,
    logLevel: 'warning',
  });
  const file = result.outputFiles.find((f) => f.path === outfile) ?? result.outputFiles[0]!;
  // The entry's own hashbang is replaced by the banner's, which must come first.
  const code = file.text.replace(/^#![^\n]*\n/, '');
  await mkdir(dirname(outfile), { recursive: true });
  await writeFile(outfile, `${BANNER}\n${code}`);
  await chmod(outfile, 0o755);
  return { outfile, bytes: Buffer.byteLength(code) + BANNER.length + 1 };
}

/** What {@link buildEditor} wrote. */
export interface BuiltEditor {
  outdir: string;
  /** File names in `outdir`, sorted. */
  files: string[];
  bytes: number;
  /** Every module bundled (paths relative to the project root): the client and browser packages only. */
  inputs: string[];
}

/**
 * Bundle the document page's editor into `outdir` (default `dist/editor/`, beside `dist/kw.mjs`).
 * @throws when a module other than the client's own folder and packages was bundled: the browser
 * must never receive server code.
 */
export async function buildEditor(outdir = resolve(root, 'dist/editor')): Promise<BuiltEditor> {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({ ...editorBuildOptions(), absWorkingDir: root, outdir, write: true, metafile: true, logLevel: 'warning' });
  const inputs = Object.keys(result.metafile.inputs).sort();
  const strays = inputs.filter((path) => !path.startsWith('transports/web/editor/') && path !== 'src/blocks/editor-protocol.ts' && !/(^|\/)node_modules\//.test(path));
  if (strays.length) throw new Error(`the editor bundle must hold only its client and browser packages, not ${strays.join(', ')}`);
  const outputs = Object.entries(result.metafile.outputs);
  return { outdir, files: outputs.map(([path]) => path.slice(path.lastIndexOf('/') + 1)).sort(), bytes: outputs.reduce((n, [, o]) => n + o.bytes, 0), inputs };
}

/** A relative `.ts` specifier in an import, export or `import()` type of a declaration file. */
const TS_SPECIFIER = /((?:\bfrom|\bimport)\s*\(?\s*)(['"])(\.\.?\/[^'"]*?)\.ts\2/g;

/** Rewrite the relative `.ts` specifiers of a declaration file's text to `.js`. */
export function rewriteDeclarationSpecifiers(text: string): string {
  return text.replace(TS_SPECIFIER, (_, lead: string, quote: string, path: string) => `${lead}${quote}${path}.js${quote}`);
}

async function filesUnder(dir: string, suffix: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path, suffix)));
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out;
}

/** Compile the library with tsc (tsconfig.build.json) into `outDir`; resolves with the files written. */
export async function buildLibrary(outDir = resolve(root, 'dist')): Promise<string[]> {
  const configPath = resolve(root, 'tsconfig.build.json');
  const host: ts.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) };
  const config = ts.getParsedCommandLineOfConfigFile(configPath, { outDir }, host)!;
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences ?? [] });
  const blocking = [...config.errors, ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics()];
  if (blocking.length) fail(blocking);
  const written: string[] = [];
  const emitted = program.emit(undefined, (file, text, bom) => {
    ts.sys.writeFile(file, file.endsWith('.d.ts') ? rewriteDeclarationSpecifiers(text) : text, bom);
    written.push(file);
  });
  const emitErrors = emitted.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (emitted.emitSkipped || emitErrors.length) fail(emitErrors);
  // Nothing relative may still point at a .ts file: Node cannot load it from node_modules.
  for (const file of await filesUnder(outDir, '.js')) {
    if (/(?:from|import)\s*\(?\s*['"]\.\.?\/[^'"]*\.ts['"]/.test(await readFile(file, 'utf8'))) throw new Error(`${file} still imports a .ts file`);
  }
  return written;
}

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const text = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' });
  throw new Error(`tsc could not build the library:\n${text}`);
}

/** The whole build: empty dist/, compile the library, bundle `kw` and the editor. */
export async function buildAll(options: Pick<BuildOptions, 'minify'> = {}): Promise<{ files: number; cli: { outfile: string; bytes: number }; editor: BuiltEditor }> {
  const dist = resolve(root, 'dist');
  await rm(dist, { recursive: true, force: true });
  const files = await buildLibrary(dist);
  const cli = await buildCli(options);
  const editor = await buildEditor(resolve(dist, 'editor'));
  return { files: files.length, cli, editor };
}

function isEntryPoint(): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
}

if (isEntryPoint()) {
  const { values } = parseArgs({ options: { outfile: { type: 'string' }, minify: { type: 'boolean' } } });
  if (values.outfile !== undefined) {
    const out = await buildCli({ outfile: values.outfile, ...(values.minify === undefined ? {} : { minify: values.minify }) });
    console.log(`built ${relative(process.cwd(), out.outfile) || out.outfile} (${(out.bytes / 1024).toFixed(0)} KB)`);
  } else {
    const { files, cli, editor } = await buildAll(values.minify === undefined ? {} : { minify: values.minify });
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
    console.log(`built dist/: ${files} library files (.js and .d.ts), ${relative(process.cwd(), cli.outfile)} (${kb(cli.bytes)}), ${relative(process.cwd(), editor.outdir)}/ (${editor.files.length} files, ${kb(editor.bytes)})`);
  }
}
