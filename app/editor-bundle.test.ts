/**
 * The editor bundle's two sources (app/editor-bundle.ts): a folder `npm run build` wrote is served
 * from disk, read once, before any source; without one the source is bundled in memory, and that
 * bundle is byte for byte what scripts/build.ts writes into dist/editor/ — one set of esbuild
 * options — holding the client and browser packages only.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildEditor } from '../scripts/build.ts';
import { EDITOR_ENTRY, PREBUILT_EDITOR_DIR, editorAvailable, editorBundle } from './editor-bundle.ts';
import type { EditorAssets } from '../transports/web/app.ts';

/** Server-side packages the browser must never receive. */
const SERVER_PACKAGES = ['markdown-it', 'minisearch', 'eta', 'lowdb', 'pg', 'ws', 'linkedom', 'unpdf', '@modelcontextprotocol'];

const text = (assets: EditorAssets, name: string) => new TextDecoder().decode(assets.files.get(name)?.body);

/** The served files as compared: name → content type, caching and bytes. */
const served = (assets: EditorAssets) =>
  Object.fromEntries([...assets.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, f]) => [name, { type: f.contentType, immutable: f.immutable, body: Buffer.from(f.body).toString('base64') }]));

test('a folder holding a prebuilt bundle is served before the source: read once, with the content types and caching of the built files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-editor-prebuilt-'));
  try {
    const files = { 'editor.js': 'import"./chunk-AAAA1111.js";', 'editor.css': '.bn{}', 'chunk-AAAA1111.js': 'export{};', 'asset-BBBB2222.woff2': 'font' };
    for (const [name, body] of Object.entries(files)) await writeFile(join(dir, name), body);
    const bundle = editorBundle({ prebuilt: dir, entry: EDITOR_ENTRY });
    assert.ok(bundle.available());
    const assets = await bundle.assets();
    assert.equal(
      Object.fromEntries([...assets.files].map(([name, f]) => [name, [f.contentType, f.immutable, new TextDecoder().decode(f.body)]])),
      {
        'editor.js': ['text/javascript; charset=utf-8', false, files['editor.js']],
        'editor.css': ['text/css; charset=utf-8', false, files['editor.css']],
        'chunk-AAAA1111.js': ['text/javascript; charset=utf-8', true, files['chunk-AAAA1111.js']],
        'asset-BBBB2222.woff2': ['font/woff2', true, files['asset-BBBB2222.woff2']],
      },
      'the prebuilt files, not a build of the source',
    );
    await writeFile(join(dir, 'editor.js'), 'changed on disk');
    assert.is(await bundle.assets(), assets, 'kept from the first read');
    assert.is(text(await bundle.assets(), 'editor.js'), files['editor.js']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a prebuilt folder alone is enough (the packed package has no source); neither folder nor source: unavailable', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-editor-alone-'));
  try {
    const missing = join(dir, 'no-such/client.ts');
    assert.not.ok(editorBundle({ prebuilt: dir, entry: missing }).available(), 'an empty folder is no bundle');
    await writeFile(join(dir, 'editor.js'), 'export{};');
    const bundle = editorBundle({ prebuilt: dir, entry: missing });
    assert.ok(bundle.available());
    assert.equal([...(await bundle.assets()).files.keys()], ['editor.js']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('in a clone the editor is bundled from source (no prebuilt folder beside app/editor-bundle.ts), and dist/editor/ is that same bundle, client and browser packages only', async () => {
  assert.ok(editorAvailable());
  assert.not.ok(editorBundle({ prebuilt: PREBUILT_EDITOR_DIR, entry: join(PREBUILT_EDITOR_DIR, 'no-such.ts') }).available(), 'no prebuilt editor beside the source');
  const out = await mkdtemp(join(tmpdir(), 'kw-editor-built-'));
  try {
    const built = await buildEditor(out);
    const fromSource = await editorBundle({ prebuilt: join(out, 'absent'), entry: EDITOR_ENTRY }).assets();
    const fromDisk = await editorBundle({ prebuilt: out, entry: join(out, 'absent.ts') }).assets();
    assert.equal(served(fromDisk), served(fromSource), 'the same files, bytes, types and caching');
    assert.equal(Object.keys(served(fromDisk)), built.files);
    assert.ok(built.files.includes('editor.js') && built.files.includes('editor.css'), built.files.join(', '));
    assert.ok(built.files.some((f) => f.startsWith('chunk-')), 'split into content-hashed chunks');
    assert.match(text(fromDisk, 'editor.js'), /\.\/chunk-[A-Z0-9]+\.js/);

    const ours = built.inputs.filter((p) => !/(^|\/)node_modules\//.test(p));
    assert.equal(ours, ['src/blocks/editor-protocol.ts', 'transports/web/editor/client.ts'], 'no module of the server: the client and the constants it shares with the rooms');
    const packages = built.inputs.filter((p) => SERVER_PACKAGES.some((name) => p.includes(`node_modules/${name}/`)) || p.startsWith('node:'));
    assert.equal(packages, [], 'no server package or node built-in');
    assert.ok(built.inputs.some((p) => p.includes('node_modules/@blocknote/core/')));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test.run();
