/**
 * API scenarios (see ./suite.ts): Documents: create, idempotency, limits, the three read formats, ETags and lists.
 * @module
 */
import * as assert from 'uvu/assert';
import { DOC_SCOPES, F, hex, newKey, sleep } from './client.ts';
import { find, flatten, ids, textOf } from './tree.ts';
import { show, expectStatus, expectEnvelope, expectError, expectOk, checkDocument, checkMutationResult } from './assert.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function documentScenarios(s: Suite, k: Kit): void {
  const { c, createDoc, read, snapshot, mutate, add, p } = k;

  // ---- documents: create --------------------------------------------------------------------

  s('POST /documents creates (201, receipt created) and an exact replay answers 200 replayed with the same document', async () => {
    const token = await c.token();
    const key = newKey();
    const body = { v: 1, title: 'Idempotent create' };
    const first = await c.call('POST', '/api/v1/documents', { token, key, body });
    const doc = checkDocument(expectOk(first, 201), 'Idempotent create');
    assert.is(doc.version, 1, 'a new document starts at version 1');
    assert.is(first.json.receipt?.idempotency, 'created');
    assert.is(first.json.receipt?.v, 1);
    assert.match(first.json.receipt?.receiptRef ?? '', F.receiptRef);
    const again = await c.call('POST', '/api/v1/documents', { token, key, body });
    const replayed = checkDocument(expectOk(again, 200));
    assert.is(again.json.receipt?.idempotency, 'replayed');
    assert.is(replayed.documentRef, doc.documentRef, 'the replay returns the same document');
    const list = expectOk(await c.call('GET', '/api/v1/documents', { token }));
    assert.is(list.items.length, 1, 'the replay created nothing');
  });

  s('POST /documents with the same key and a different body is 409 IDEMPOTENCY_CONFLICT', async () => {
    const token = await c.token();
    const key = newKey();
    expectOk(await c.call('POST', '/api/v1/documents', { token, key, body: { v: 1, title: 'One' } }), 201);
    expectError(await c.call('POST', '/api/v1/documents', { token, key, body: { v: 1, title: 'Two' } }), 409, 'IDEMPOTENCY_CONFLICT');
  });

  s('an Idempotency-Key used by another account never replays that account\'s document', async () => {
    const a = await c.token();
    const b = await c.token();
    const key = newKey();
    const body = { v: 1, title: 'Same key, two accounts' };
    const first = checkDocument(expectOk(await c.call('POST', '/api/v1/documents', { token: a, key, body }), 201));
    const second = await c.call('POST', '/api/v1/documents', { token: b, key, body });
    assert.ok(second.status === 201 || second.status === 409, show(second));
    if (second.status === 201) assert.is.not(second.json.data.documentRef, first.documentRef);
    assert.not.ok(second.text.includes(first.documentRef), 'the other account\'s documentRef is not revealed');
  });

  s('POST /documents without Idempotency-Key is 400 IDEMPOTENCY_REQUIRED', async () => {
    const token = await c.token();
    expectError(await c.call('POST', '/api/v1/documents', { token, body: { v: 1, title: 'No key' } }), 400, 'IDEMPOTENCY_REQUIRED');
  });

  s('POST /documents with a bad body is 400 INVALID_REQUEST with well-formed fieldErrors', async () => {
    const token = await c.token();
    const bad: unknown[] = [
      { v: 1 },
      { v: 1, title: '' },
      { v: 1, title: 'x'.repeat(241) },
      { v: 2, title: 'Wrong v' },
      { title: 'No v' },
      { v: 1, title: 'Extra', extra: true },
      { v: 1, title: 42 },
      [],
    ];
    for (const body of bad) {
      const r = await c.call('POST', '/api/v1/documents', { token, key: newKey(), body });
      const error = expectError(r, 400, 'INVALID_REQUEST');
      assert.ok(Array.isArray(error.fieldErrors) && error.fieldErrors.length >= 1, `fieldErrors for ${JSON.stringify(body).slice(0, 60)}`);
      for (const fe of error.fieldErrors) assert.match(fe.field, F.fieldErrorField);
    }
    const notJson = await c.call('POST', '/api/v1/documents', { token, key: newKey(), rawBody: '{"v":1,' });
    expectError(notJson, 400, 'INVALID_REQUEST');
    const max = await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1, title: 't'.repeat(240) } });
    checkDocument(expectOk(max, 201), 't'.repeat(240));
  });

  s('string limits count characters (code points, as JSON Schema maxLength does): a 240-emoji title is accepted, 241 refused', async () => {
    const token = await c.token();
    const title = '\u{1F600}'.repeat(240);
    const ok = await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1, title } });
    checkDocument(expectOk(ok, 201), title);
    expectError(await c.call('POST', '/api/v1/documents', { token, key: newKey(), body: { v: 1, title: title + '\u{1F600}' } }), 400, 'INVALID_REQUEST');
    const doc = ok.json.data;
    const { rev } = await snapshot(token, doc.documentRef);
    const intent = '\u{1F4DD}'.repeat(500);
    const r = await mutate(token, doc.documentRef, { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [p('x')] }, { revision: rev, intent });
    checkMutationResult(r, { documentRef: doc.documentRef });
  });

  s('every document has its own space and its own Service-Revision', async () => {
    const token = await c.token();
    const a = await createDoc(token, 'A');
    const b = await createDoc(token, 'B');
    assert.is.not(a.documentRef, b.documentRef);
    assert.is.not(a.spaceRef, b.spaceRef, 'each document has its own space');
    const ra = (await read(token, a.documentRef)).headers.get('service-revision');
    const rb = (await read(token, b.documentRef)).headers.get('service-revision');
    assert.ok(ra && rb);
    assert.is.not(ra, rb, 'two documents never share a Service-Revision');
  });

  s('Idempotency-Key of 16 and 128 characters is accepted; 15, 129 or a foreign character is 400 INVALID_REQUEST', async () => {
    const token = await c.token();
    for (const len of [16, 128]) {
      const r = await c.call('POST', '/api/v1/documents', { token, key: `K${'k'.repeat(len - 1)}`, body: { v: 1, title: `key ${len}` } });
      expectOk(r, 201);
    }
    for (const key of ['K'.repeat(15), 'K'.repeat(129), 'key.with.dots.123456', 'key with spaces 123456']) {
      expectError(await c.call('POST', '/api/v1/documents', { token, key, body: { v: 1, title: 'bad key' } }), 400, 'INVALID_REQUEST');
    }
  });

  s('a request body over 256 KB is 400 INVALID_REQUEST; a 256,000-byte body is accepted', async () => {
    const token = await c.token();
    // "256 KB" may mean 256,000 or 262,144 bytes: 256,000 is within both, 262,145 over both.
    const json = (size: number) => {
      const head = '{"v":1,"title":"Big body"';
      return `${head}${' '.repeat(size - head.length - 1)}}`;
    };
    const within = json(256_000);
    assert.is(Buffer.byteLength(within), 256_000);
    expectOk(await c.call('POST', '/api/v1/documents', { token, key: newKey(), rawBody: within }), 201);
    const over = json(262_145);
    expectError(await c.call('POST', '/api/v1/documents', { token, key: newKey(), rawBody: over }), 400, 'INVALID_REQUEST');
  });

  s('a streamed (chunked) request body over 256 KB is 400 INVALID_REQUEST; a small streamed body works', async () => {
    const token = await c.token();
    const head = '{"v":1,"title":"Streamed"';
    const over = `${head}${' '.repeat(300_000)}}`;
    expectError(await c.call('POST', '/api/v1/documents', { token, key: newKey(), rawBody: over, chunked: true }), 400, 'INVALID_REQUEST');
    const small = await c.call('POST', '/api/v1/documents', { token, key: newKey(), rawBody: `${head}}`, chunked: true });
    checkDocument(expectOk(small, 201), 'Streamed');
  });
  // ---- documents: read ----------------------------------------------------------------------

  s('GET a document in rich-json, blocks and markdown: same Service-Revision, weak ETags, markdown loss count', async () => {
    const token = await c.token();
    const doc = await createDoc(token, 'Three formats');
    const [h, p1, child] = await add(token, doc.documentRef, [
      { type: 'heading', level: 2, markdown: 'Section' },
      p('Hello **world**', [p('Nested child')]),
    ]);
    const rich = await read(token, doc.documentRef);
    const richData = checkDocument(expectOk(rich), 'Three formats');
    const explicit = await read(token, doc.documentRef, '?format=rich-json');
    assert.equal(expectOk(explicit), richData, 'format=rich-json is the default');
    const blocks = await read(token, doc.documentRef, '?format=blocks');
    const blocksData = expectOk(blocks);
    const md = await read(token, doc.documentRef, '?format=markdown');
    expectStatus(md, 200);
    assert.match(md.headers.get('content-type') ?? '', /^text\/markdown/i);
    const loss = md.headers.get('x-service-markdown-loss-count');
    assert.ok(loss !== null && /^\d+$/.test(loss), `X-Service-Markdown-Loss-Count ${loss}`);
    assert.ok(md.text.includes('Section') && md.text.includes('world') && md.text.includes('Nested child'), md.text);
    assert.match(md.text, /^## Section/m, 'a level-2 heading renders as ##');

    const revs = [rich, explicit, blocks, md].map((r) => r.headers.get('service-revision'));
    assert.ok(revs[0], 'Service-Revision present');
    for (const rev of revs) assert.is(rev, revs[0], 'all three formats carry the same Service-Revision');
    for (const r of [rich, blocks, md]) assert.match(r.headers.get('etag') ?? '', F.weakEtag, `weak ETag on ${r.path}`);

    // format=blocks: a flat list of authored blocks, each with stable ID, parent, index and own Markdown.
    // Its property names are not shown: find the array and accept the obvious spellings.
    const list = Object.values(blocksData).find((v) => Array.isArray(v)) as any[] | undefined;
    assert.ok(list, `format=blocks data holds an array: ${JSON.stringify(blocksData).slice(0, 200)}`);
    const idOf = (b: any) => b.id ?? b.blockId;
    const parentOfItem = (b: any) => ('parentId' in b ? b.parentId : 'parentBlockId' in b ? b.parentBlockId : b.parent);
    assert.equal(list!.map(idOf).sort(), ids(richData.document.blocks).sort(), 'the same block ids as rich-json');
    for (const b of list!) {
      assert.ok(Number.isInteger(b.index) && b.index >= 0, `index of ${idOf(b)}`);
      assert.type(b.markdown, 'string', `own markdown of ${idOf(b)}`);
    }
    const byId = new Map(list!.map((b) => [idOf(b), b]));
    assert.is(parentOfItem(byId.get(child)) ?? null, p1, 'the child names its parent');
    assert.is(parentOfItem(byId.get(h)) ?? null, null, 'a root block has no parent');
    assert.ok(String(byId.get(p1).markdown).includes('Hello **world**'), 'own Markdown of the paragraph');
    assert.not.ok(String(byId.get(p1).markdown).includes('Nested child'), 'own Markdown excludes children');
  });

  s('a flat document of the contract block types reads as Markdown with loss count 0', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    await add(token, doc.documentRef, [
      { type: 'heading', level: 1, markdown: 'Top' },
      p('Some *emphasis* and a [link](https://example.org/x).'),
      { type: 'bulletListItem', markdown: 'bullet' },
      { type: 'numberedListItem', markdown: 'numbered' },
      { type: 'checkListItem', checked: false, markdown: 'todo' },
      { type: 'quote', markdown: 'quoted' },
      { type: 'codeBlock', language: 'js', code: 'let a = 1;' },
    ]);
    const md = await read(token, doc.documentRef, '?format=markdown');
    expectStatus(md, 200);
    assert.is(md.headers.get('x-service-markdown-loss-count'), '0', md.text);
    for (const piece of ['# Top', '[link](https://example.org/x)', 'bullet', 'numbered', 'todo', '> quoted', 'let a = 1;']) {
      assert.ok(md.text.includes(piece), `markdown contains ${piece}: ${md.text}`);
    }
  });

  s('If-None-Match with the current ETag answers 304 with an empty body, Service-Revision and ETag', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    await add(token, doc.documentRef, [p('Cached text')]);
    for (const query of ['', '?format=blocks', '?format=markdown']) {
      const first = await read(token, doc.documentRef, query);
      expectStatus(first, 200);
      const etag = first.headers.get('etag')!;
      assert.match(etag, F.weakEtag);
      const again = await read(token, doc.documentRef, query, { 'If-None-Match': etag });
      expectStatus(again, 304);
      assert.is(again.text, '', '304 has an empty body');
      assert.is(again.headers.get('service-revision'), first.headers.get('service-revision'), `304 carries Service-Revision (${query || 'rich-json'})`);
      assert.is(again.headers.get('etag'), etag, '304 carries the ETag');
      const other = await read(token, doc.documentRef, query, { 'If-None-Match': 'W/"something-else"' });
      expectStatus(other, 200);
    }
    const before = await read(token, doc.documentRef);
    await add(token, doc.documentRef, [p('Changed')]);
    const after = await read(token, doc.documentRef, '', { 'If-None-Match': before.headers.get('etag')! });
    expectStatus(after, 200);
    assert.is.not(after.headers.get('service-revision'), before.headers.get('service-revision'), 'the revision changes with the version');
  });

  s('If-None-Match uses HTTP weak comparison: a list holding the ETag, the bare tag and * answer 304', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const etag = (await read(token, doc.documentRef)).headers.get('etag')!;
    assert.match(etag, F.weakEtag);
    for (const value of [`W/"nope", ${etag}`, etag.slice(2), '*']) {
      const r = await read(token, doc.documentRef, '', { 'If-None-Match': value });
      assert.is(r.status, 304, `If-None-Match: ${value} → ${r.status}`);
    }
  });

  s('GET a document with an unknown format is 400 INVALID_REQUEST; an unknown document is 404', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    for (const q of ['?format=pdf', '?format=', '?format=MARKDOWN']) expectError(await read(token, doc.documentRef, q), 400, 'INVALID_REQUEST');
    expectError(await read(token, `sdoc_${hex(48)}`), 404, 'NOT_FOUND');
    const malformed = await read(token, 'not-a-document-ref');
    assert.ok(malformed.status === 404 || malformed.status === 400, show(malformed));
    expectEnvelope(malformed);
  });

  s('rich-json blocks are BlockNote-shaped: id, type, props with defaults, inline content, children', async () => {
    const token = await c.token();
    const doc = await createDoc(token);
    const [h, para, check, code, quote, table, bullet] = await add(token, doc.documentRef, [
      { type: 'heading', level: 3, markdown: 'Title' },
      p('Plain **bold** [source](https://example.org/a)'),
      { type: 'checkListItem', checked: true, markdown: 'Done' },
      { type: 'codeBlock', language: 'typescript', code: 'const x = 1;' },
      { type: 'quote', markdown: 'Quoted' },
      { type: 'table', rows: [['a', 'b'], ['c', 'd']] },
      { type: 'bulletListItem', markdown: 'Item' },
    ]);
    const { blocks } = await snapshot(token, doc.documentRef);
    for (const { block } of flatten(blocks)) {
      for (const k of ['id', 'type', 'props', 'content', 'children']) assert.ok(k in block, `block.${k} (${block.type})`);
      assert.ok(Array.isArray(block.children));
    }
    const heading = find(blocks, h!)!;
    assert.is(heading.type, 'heading');
    assert.is(heading.props.level, 3);
    const paragraph = find(blocks, para!)!;
    assert.is(paragraph.type, 'paragraph');
    assert.is(paragraph.props.textAlignment, 'left', 'BlockNote default prop textAlignment');
    assert.is(paragraph.props.textColor, 'default');
    assert.is(paragraph.props.backgroundColor, 'default');
    assert.ok(Array.isArray(paragraph.content));
    const bold = paragraph.content.find((x: any) => x.type === 'text' && x.text === 'bold');
    assert.ok(bold, 'bold text item');
    assert.equal(bold.styles, { bold: true });
    const plain = paragraph.content.find((x: any) => x.type === 'text' && x.text.startsWith('Plain'));
    assert.equal(plain.styles, {});
    const link = paragraph.content.find((x: any) => x.type === 'link');
    assert.ok(link, 'link item');
    assert.is(link.href, 'https://example.org/a');
    assert.is(textOf(link.content), 'source');
    assert.is(find(blocks, check!)!.props.checked, true);
    assert.is(find(blocks, code!)!.props.language, 'typescript');
    assert.is(textOf(find(blocks, code!)!.content), 'const x = 1;');
    assert.is(textOf(find(blocks, quote!)!.content), 'Quoted');
    const t = find(blocks, table!)!;
    assert.is(t.content?.type, 'tableContent');
    assert.ok(Array.isArray(t.content.rows) && t.content.rows.length === 2 && Array.isArray(t.content.rows[0].cells));
    assert.is(t.content.rows[0].cells.length, 2);
    assert.is(find(blocks, bullet!)!.type, 'bulletListItem');
  });
  // ---- lists --------------------------------------------------------------------------------

  s('GET /documents pages newest updatedAt first with limit and nextCursor; summaries carry no body', async () => {
    const token = await c.token();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await createDoc(token, `List ${i}`)).documentRef);
      await sleep(3);
    }
    const all = expectOk(await c.call('GET', '/api/v1/documents', { token }));
    assert.ok(Array.isArray(all.items), 'data.items');
    assert.ok('nextCursor' in all, 'data.nextCursor');
    assert.is(all.nextCursor, null, 'one page holds all five');
    const refs = all.items.map((x: any) => x.documentRef);
    assert.equal(refs, [...made].reverse(), 'newest first');
    for (const item of all.items) {
      assert.not.ok('document' in item, 'summaries have no body');
      if ('updatedAt' in item) assert.match(item.updatedAt, F.timestamp);
    }
    // A mutation makes the oldest document the most recently updated.
    await add(token, made[0]!, [p('touch')]);
    const touched = expectOk(await c.call('GET', '/api/v1/documents', { token }));
    assert.is(touched.items[0].documentRef, made[0], 'the updated document comes first');

    const page1 = expectOk(await c.call('GET', '/api/v1/documents?limit=2', { token }));
    assert.is(page1.items.length, 2);
    assert.type(page1.nextCursor, 'string');
    const page2 = expectOk(await c.call('GET', `/api/v1/documents?limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`, { token }));
    assert.is(page2.items.length, 2);
    const page3 = expectOk(await c.call('GET', `/api/v1/documents?limit=2&cursor=${encodeURIComponent(page2.nextCursor)}`, { token }));
    assert.is(page3.items.length, 1);
    assert.is(page3.nextCursor, null);
    const paged = [...page1.items, ...page2.items, ...page3.items].map((x: any) => x.documentRef);
    assert.equal(paged, touched.items.map((x: any) => x.documentRef), 'pages concatenate to the whole list');
  });

  s('GET /documents limit defaults to 20 and must be 1-50', async () => {
    const token = await c.token();
    for (let i = 0; i < 21; i++) await createDoc(token, `Many ${i}`);
    const first = expectOk(await c.call('GET', '/api/v1/documents', { token }));
    assert.is(first.items.length, 20, 'default page size 20');
    assert.type(first.nextCursor, 'string');
    assert.is(expectOk(await c.call('GET', '/api/v1/documents?limit=50', { token })).items.length, 21);
    assert.is(expectOk(await c.call('GET', '/api/v1/documents?limit=1', { token })).items.length, 1);
    for (const q of ['limit=0', 'limit=51', 'limit=abc', 'limit=-1', 'limit=2.5']) {
      expectError(await c.call('GET', `/api/v1/documents?${q}`, { token }), 400, 'INVALID_REQUEST');
    }
  });

  s('a list cursor of another credential, or a tampered one, is 400 INVALID_REQUEST', async () => {
    const account = c.account();
    const one = (await c.credential({ scopes: DOC_SCOPES, account })).token;
    const two = (await c.credential({ scopes: DOC_SCOPES, account })).token;
    await createDoc(one, 'c1');
    await createDoc(one, 'c2');
    const page = expectOk(await c.call('GET', '/api/v1/documents?limit=1', { token: one }));
    assert.type(page.nextCursor, 'string');
    const cursor = encodeURIComponent(page.nextCursor);
    expectOk(await c.call('GET', `/api/v1/documents?limit=1&cursor=${cursor}`, { token: one }));
    expectError(await c.call('GET', `/api/v1/documents?limit=1&cursor=${cursor}`, { token: two }), 400, 'INVALID_REQUEST');
    const tampered = page.nextCursor.slice(0, -2) + (page.nextCursor.endsWith('AA') ? 'BB' : 'AA');
    expectError(await c.call('GET', `/api/v1/documents?limit=1&cursor=${encodeURIComponent(tampered)}`, { token: one }), 400, 'INVALID_REQUEST');
    expectError(await c.call('GET', '/api/v1/documents?cursor=garbage', { token: one }), 400, 'INVALID_REQUEST');
  });
}
