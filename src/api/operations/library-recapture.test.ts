import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentExtractor, nodeFetcher } from '../../../adapters/capture/index.ts';
import { startServer } from '../../../fixtures/http-kit.ts';

let n = 0;
const key = () => `recapture-key-${String(++n).padStart(8, '0')}`;

test('recapture over HTTP: a failed capture is taken again on the same item; other states and replays answer as documented', async () => {
  // A page that is down (503) until it is fixed.
  let up = false;
  const page = createServer((_req, res) => {
    if (!up) {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<p>down</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>Back up</title></head><body><article><p>The page answers again, so its capture can be taken.</p></article></body></html>');
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  const s = await startServer({ engine: { fetcher: nodeFetcher({ testAllowOrigins: [origin] }), extractor: contentExtractor() } });
  try {
    const { token } = await s.credential({ scopes: ['library:read', 'library:write'] });
    const call = (body: object) => s.req('/api/v1/library', { method: 'POST', token, body });
    const saved = (await call({ type: 'save-link', url: `${origin}/article`, idempotencyKey: key() })).json.data.item;
    await s.engine.library.idle();
    const failed = (await call({ type: 'get', itemId: saved.itemId })).json.data.item;
    assert.equal([failed.capture.state, failed.capture.reason.code], ['failed', 'http-error']);

    up = true;
    const k = key();
    const again = await call({ type: 'recapture', sourceId: saved.itemId, idempotencyKey: k });
    assert.is(again.status, 200, again.text);
    assert.equal([again.json.data.type, again.json.data.item.itemId, again.json.data.item.capture.state, again.json.data.item.capture.reason], ['recapture', saved.itemId, 'pending', null]);
    assert.is(again.json.data.item.revision, failed.revision + 1);
    await s.engine.library.idle();
    const ready = (await call({ type: 'get', itemId: saved.itemId })).json.data.item;
    assert.equal([ready.capture.state, ready.title], ['ready', 'Back up']);
    // The same key replays (no new capture); a new key on a ready source is 409 CONFLICT on sourceId.
    const replay = await call({ type: 'recapture', sourceId: saved.itemId, idempotencyKey: k });
    assert.equal([replay.status, replay.json.data.item.capture.state], [200, 'ready']);
    const refused = await call({ type: 'recapture', sourceId: saved.itemId, idempotencyKey: key() });
    assert.equal([refused.status, refused.json.error.code, refused.json.error.fieldErrors[0].field], [409, 'CONFLICT', 'sourceId']);
    assert.match(refused.json.error.message, /capture ready/);
    const listed = (await call({ type: 'list' })).json.data.items;
    assert.is(listed.length, 1, 'the same item, never a duplicate');
  } finally {
    await s.close();
    page.closeAllConnections();
    await new Promise((r) => page.close(r));
  }
});

test.run();
