/**
 * The document page's editor bundle: transports/web/editor/client.ts with BlockNote, Yjs and the
 * y-websocket provider, bundled by esbuild (ES modules, minified, split into chunks) with
 * {@link editorBuildOptions}, the one definition `npm run build` uses too.
 * - **Prebuilt.** `npm run build` writes the bundle once into dist/editor/, beside dist/kw.mjs; the
 *   packed `kw` reads those files the first time a page asks for one, then keeps them.
 * - **From source.** Without a prebuilt folder beside the running module (a clone, where this module
 *   runs as app/editor-bundle.ts), the client is bundled in memory on the first request, so a clone
 *   always serves its current source.
 * @remarks Building takes a second or two of CPU, so it is never done at start-up: servers that no
 * browser opens a document on never pay it.
 * @module
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import type { EditorAsset, EditorAssets } from '../transports/web/app.ts';

/** The editor's source entry (absent from the packed package). */
export const EDITOR_ENTRY = fileURLToPath(new URL('../transports/web/editor/client.ts', import.meta.url));

/**
 * The prebuilt bundle's folder: `editor/` beside the running module, so dist/editor/ beside
 * dist/kw.mjs (also in node_modules/knowledge-workspace/dist/); a clone's app/ has none.
 */
export const PREBUILT_EDITOR_DIR = fileURLToPath(new URL('./editor/', import.meta.url));

/** The file of a bundle the page links by name: present in every complete bundle. */
const MAIN_FILE = 'editor.js';

/**
 * The esbuild options of the editor bundle, without the output (`outdir`, `write`, logging): the
 * in-memory build and `npm run build` add their own.
 */
export function editorBuildOptions(entry = EDITOR_ENTRY): BuildOptions {
  return {
    entryPoints: { editor: entry },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    chunkNames: 'chunk-[hash]',
    assetNames: 'asset-[hash]',
    loader: { '.woff': 'file', '.woff2': 'file', '.svg': 'file', '.png': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
  };
}

/** A file of the bundle as served: its content type, and whether its name is content-hashed. */
export function editorAsset(name: string, body: Uint8Array): EditorAsset {
  const contentType = name.endsWith('.js') ? 'text/javascript; charset=utf-8' : name.endsWith('.css') ? 'text/css; charset=utf-8' : name.endsWith('.woff2') ? 'font/woff2' : 'application/octet-stream';
  // editor.js / editor.css keep their names (the page links them): revalidated; chunks are content-hashed.
  return { contentType, body, immutable: name.startsWith('chunk-') || name.startsWith('asset-') };
}

/** Where an {@link editorBundle} looks for the editor. */
export interface EditorPlaces {
  /** A folder `npm run build` wrote (served when it holds `editor.js`). */
  prebuilt: string;
  /** The client's source entry (bundled in memory when there is no prebuilt folder). */
  entry: string;
}

/** The editor of one pair of {@link EditorPlaces}. */
export interface EditorBundle {
  /** True when there is a prebuilt bundle or the source to build one. */
  available(): boolean;
  /** The bundle's files (read or built once; a failure is retried on the next call). */
  assets(): Promise<EditorAssets>;
}

/** The editor served from `places`: the prebuilt folder when it holds a bundle, else the source. */
export function editorBundle(places: EditorPlaces): EditorBundle {
  let loaded: Promise<EditorAssets> | null = null;
  const prebuilt = () => existsSync(join(places.prebuilt, MAIN_FILE));
  return {
    available: () => prebuilt() || existsSync(places.entry),
    assets() {
      loaded ??= (prebuilt() ? readPrebuilt(places.prebuilt) : bundleInMemory(places.entry)).catch((error: unknown) => {
        loaded = null;
        throw error;
      });
      return loaded;
    },
  };
}

async function readPrebuilt(dir: string): Promise<EditorAssets> {
  const files = new Map<string, EditorAsset>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) files.set(entry.name, editorAsset(entry.name, await readFile(join(dir, entry.name))));
  }
  return { files };
}

async function bundleInMemory(entry: string): Promise<EditorAssets> {
  const result = await build({ ...editorBuildOptions(entry), write: false, outdir: '/editor', logLevel: 'silent' });
  const files = new Map<string, EditorAsset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    files.set(name, editorAsset(name, file.contents));
  }
  return { files };
}

const standard = editorBundle({ prebuilt: PREBUILT_EDITOR_DIR, entry: EDITOR_ENTRY });

/**
 * True when `kw serve` can serve the editor: the packed `dist/kw.mjs` with its dist/editor/, or a
 * checkout (`npm start`) with the source. A lone copy of kw.mjs serves the rendered page without it.
 */
export function editorAvailable(): boolean {
  return standard.available();
}

/** The editor bundle: the prebuilt files, or the source bundled in memory (once per process). */
export function editorAssets(): Promise<EditorAssets> {
  return standard.assets();
}
