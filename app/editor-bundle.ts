/**
 * The document page's editor bundle: src/web/editor/client.ts with BlockNote, Yjs and the
 * y-websocket provider, bundled by esbuild in memory (ES modules, minified, split into chunks) the
 * first time a page asks for it, then kept for the life of the process.
 * @remarks Building takes a second or two of CPU, so it is never done at start-up: servers that no
 * browser opens a document on never pay it.
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { EditorAsset, EditorAssets } from '../src/web/app.ts';

const ENTRY = fileURLToPath(new URL('../src/web/editor/client.ts', import.meta.url));

let built: Promise<EditorAssets> | null = null;

/**
 * True when the editor's source is at hand (a checkout, `npm start`); false in the one-file
 * `dist/kw.mjs`, which serves the rendered document page without the editor.
 */
export function editorAvailable(): boolean {
  return existsSync(ENTRY);
}

/** Bundle the editor (once per process; a failed build is retried on the next call). */
export function editorAssets(): Promise<EditorAssets> {
  built ??= bundle().catch((error: unknown) => {
    built = null;
    throw error;
  });
  return built;
}

async function bundle(): Promise<EditorAssets> {
  const result = await build({
    entryPoints: { editor: ENTRY },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: '/editor',
    chunkNames: 'chunk-[hash]',
    assetNames: 'asset-[hash]',
    loader: { '.woff': 'file', '.woff2': 'file', '.svg': 'file', '.png': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  });
  const files = new Map<string, EditorAsset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    const type = name.endsWith('.js') ? 'text/javascript; charset=utf-8' : name.endsWith('.css') ? 'text/css; charset=utf-8' : name.endsWith('.woff2') ? 'font/woff2' : 'application/octet-stream';
    // editor.js / editor.css keep their names (the page links them): revalidated; chunks are content-hashed.
    files.set(name, { contentType: type, body: file.contents, immutable: name.startsWith('chunk-') || name.startsWith('asset-') });
  }
  return { files };
}
