/**
 * The bundle budget of the typed client: bundled for a browser it stays within 35 KB after gzip and
 * carries none of the server (no markdown-it, minisearch, eta, yjs or node: module), because it reads
 * the contract and nothing else.
 */
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CLIENT_BUNDLE_GZIP_BUDGET, measureClientBundle } from './client-bundle.ts';

const root = resolve(import.meta.dirname, '..');

test('the client bundle (minified, browser, ky and valibot inside) is at most 35 KB gzip and carries no server module', async () => {
  const bundle = await measureClientBundle(root);
  assert.equal(bundle.forbidden, [], 'no markdown-it, minisearch, eta, yjs or node: module');
  assert.ok(bundle.inputs.some((p) => p.includes('node_modules/ky/')), 'ky is inside');
  assert.ok(bundle.inputs.some((p) => p.includes('node_modules/valibot/')), 'valibot is inside');
  assert.ok(bundle.inputs.includes('src/contract/operations.ts'), 'the contract is inside');
  assert.not.ok(bundle.inputs.some((p) => p.startsWith('src/api/')), 'nothing of the server edge');
  assert.ok(bundle.gzipBytes <= CLIENT_BUNDLE_GZIP_BUDGET, `${bundle.gzipBytes} bytes gzip, budget ${CLIENT_BUNDLE_GZIP_BUDGET}`);
});

test.run();
