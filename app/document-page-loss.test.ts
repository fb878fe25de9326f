/**
 * A document holding a block Markdown cannot carry (a divider, put in through live co-editing): its
 * page answers 200 with the document from rich-json and a note instead of the Markdown, its event
 * stream sends versions, and (in Chromium, when installed) the editor mounts, so that the person can
 * remove the block. `kw serve`'s server in process, memory storage, loopback.
 */
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as Y from 'yjs';
import { serve, type DevServer } from './serve.ts';
import { SyncClient } from '../transports/sync/sync-kit.ts';
import { containerElement, type EditorBlock } from '../src/blocks/editor-fragment.ts';
import { OPERATOR_KEY, signIn, streamText, type Running } from '../transports/web/web-kit.ts';
import { chromiumAvailable, launchChromium } from '../scripts/chromium-kit.ts';

let s: DevServer;
let ref: string;

test.before(async () => {
  s = await serve({ port: 0, storage: 'memory', seed: 'demo', operatorKey: OPERATOR_KEY, sync: { timing: { pauseMs: 50, maxMs: 300 } } });
  ref = s.demo!.documentRef;
  // A person inserts a divider in the live editor; it becomes a version.
  const client = await SyncClient.connect(`${s.url.replace('http', 'ws')}/documents/${ref}/sync`, s.demo!.token);
  const group = client.fragment.get(0) as Y.XmlElement;
  const divider: EditorBlock = { id: 'divider-0001', type: 'divider', props: {}, children: [] };
  client.doc.transact(() => group.insert(1, [containerElement(divider)]));
  await client.close();
  await s.sync.flush();
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${s.url}/api/v1/documents/${ref}`, { headers: { authorization: `Bearer ${s.demo!.token}` } });
    const blocks = ((await r.json()) as { data: { document: { blocks: { type: string }[] } } }).data.document.blocks;
    if (blocks.some((b) => b.type === 'divider')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the divider never became a version');
});
test.after(async () => {
  await s.close();
});

const running = () => ({ url: s.url, engine: s.engine, app: s.browserApp!, close: () => s.close() }) as Running;

test('the page answers 200 with a note instead of the Markdown, and the editor mount point; the API still refuses Markdown (409)', async () => {
  const md = await fetch(`${s.url}/api/v1/documents/${ref}?format=markdown`, { headers: { authorization: `Bearer ${s.demo!.token}` } });
  assert.is(md.status, 409, 'an agent asking for Markdown is told, as before');
  const { cookie } = await signIn(running());
  const page = await fetch(`${s.url}/documents/${ref}`, { headers: { cookie } });
  const html = await page.text();
  assert.is(page.status, 200, html.slice(0, 400));
  assert.match(html, /id="doc-markdown-refused"[^>]*>No Markdown of this version: The document holds 1 block\(s\) outside the Markdown grammar/);
  assert.match(html, /<div id="editor"/);
  const gone = new AbortController();
  const events = await fetch(`${s.url}/documents/${ref}/events?after=0`, { headers: { cookie }, signal: gone.signal });
  assert.is(events.status, 200);
  const stream = streamText(events);
  await stream.until('event: version');
  gone.abort();
});

const it = chromiumAvailable('app/document-page-loss.test.ts') ? test : test.skip;

it('in Chromium the editor mounts on that page and shows the divider', async () => {
  const browser = await launchChromium(resolve(import.meta.dirname, '../test-artifacts/document-page-loss'));
  try {
    const link = (await (await fetch(`${s.url}/operator/v1/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' }, body: '{}' })).json()) as { data: { url: string } };
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(link.data.url);
    await page.goto(`${s.url}/documents/${ref}`);
    await page.locator('#editor[data-state="ready"]').waitFor({ timeout: 30_000 });
    const types = await page.evaluate(() => (globalThis as unknown as { kwEditor: { editor: { document: { type: string }[] } } }).kwEditor.editor.document.map((b) => b.type));
    assert.ok(types.includes('divider'), JSON.stringify(types));
    assert.equal(problems, []);
  } finally {
    await browser.close();
  }
});

test.run();
