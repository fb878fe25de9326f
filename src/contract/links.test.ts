/** Links are rendered from the contract's paths, under the engine's base URL, in one place. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { linksAt, locatorPath, operationPath } from './links.ts';
import { contract } from './operations.ts';
import { createEngine } from '../engine.ts';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { accountActor } from '../actor.ts';

test('each link is its operation path under the base URL; a trailing slash of the base is dropped', () => {
  const links = linksAt('https://kw.example/kw/');
  assert.is(links.baseUrl, 'https://kw.example/kw');
  assert.is(links.documentPage('kdoc_abc'), 'https://kw.example/kw/documents/kdoc_abc');
  assert.is(links.reviewPage('krev_abc'), 'https://kw.example/kw/reviews/krev_abc');
  assert.is(links.publicPage({ kind: 'entity', artifactId: 'kent_x', revision: 'r.1' }), 'https://kw.example/kw/k/entity/kent_x/r.1');
  assert.is(links.report('kjob_1', 'markdown'), 'https://kw.example/kw/api/v1/research-jobs/kjob_1/report?format=markdown');
  assert.is(linksAt('').documentPage('kdoc_abc'), '/documents/kdoc_abc');
  assert.is(locatorPath({ kind: 'edition', artifactId: 'kedn_x', revision: 'abc' }), '/k/edition/kedn_x/abc');
});

test('path parameters are percent-encoded, and a missing one is a TypeError naming the operation', () => {
  assert.is(operationPath(contract.getDocument, { documentRef: 'a/b?c' }), '/api/v1/documents/a%2Fb%3Fc');
  assert.throws(() => operationPath(contract.getDocument, {}), /getDocument: path parameter documentRef is missing/);
});

test("an engine's answers carry links under its base URL (given with a trailing slash)", async () => {
  const engine = createEngine({ storage: memoryStorage(), baseUrl: 'http://127.0.0.1:9/kw/' });
  try {
    assert.is(engine.baseUrl, 'http://127.0.0.1:9/kw');
    const { document } = await engine.documents.create(accountActor('acct_links'), { idempotencyKey: 'links-test-key-0001', body: { v: 1, title: 'Links' } });
    assert.is(document.browserHref, `http://127.0.0.1:9/kw/documents/${document.documentRef}`);
    const page = await engine.documents.list(accountActor('acct_links'), {});
    assert.is(page.items[0]!.browserHref, document.browserHref);
  } finally {
    await engine.close();
  }
});

test.run();
