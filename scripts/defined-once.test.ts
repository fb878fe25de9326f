/**
 * One definition per fact: an exported name is declared in one production file only. Two files that
 * export the same name are two definitions of one concept (they drift: issue 27 found `KeyedLock`,
 * `escapeHtml`, `accountActor`, `TERMINAL_EVENT_KINDS` twice, one pair already differing) or two
 * concepts under one name; either way one of them gets another name or imports the other. Re-exports
 * (`export { x } from`) are not declarations. Tests, test kits and fixtures are left out, and so is
 * transports/conformance: a black-box suite that states the contract again on purpose (its own
 * required actions, its own client), so that it does not pass by sharing the server's definitions.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');

/** Names declared twice on purpose, with the reason. */
const ALLOWED = new Map([
  ['Engine', 'src/index.ts narrows the engine to its public type for the package root'],
  ['createEngine', 'src/index.ts gives createEngine the public type for the package root'],
]);

const DECLARATION = /^export (?:declare )?(?:default )?(?:async )?(?:abstract )?(?:function\*?|class|const|let|var|type|interface|enum) +([A-Za-z0-9_$]+)/gm;

function productionFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--', 'src', 'adapters', 'transports', 'app'], { cwd: root, encoding: 'utf8' }).split('\0');
  return listed.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('-kit.ts') && !f.endsWith('.d.ts') && !f.startsWith('transports/conformance/'));
}

test('every exported name is declared in one production file', () => {
  const where = new Map<string, Set<string>>();
  for (const file of productionFiles()) {
    for (const m of readFileSync(resolve(root, file), 'utf8').matchAll(DECLARATION)) {
      const name = m[1]!;
      if (!where.has(name)) where.set(name, new Set());
      where.get(name)!.add(file);
    }
  }
  const twice = [...where].filter(([name, files]) => files.size > 1 && !ALLOWED.has(name)).map(([name, files]) => `${name}: ${[...files].join(', ')}`);
  assert.equal(twice, [], `names declared in more than one file:\n${twice.join('\n')}`);
  for (const name of ALLOWED.keys()) assert.ok((where.get(name)?.size ?? 0) > 1, `${name} is allowed twice but is declared once now: remove it from ALLOWED`);
});

/** The modules that write an HTML page's frame (`<!doctype html>`), one per edge that answers pages, with what it frames. */
const PAGE_FRAMES = new Map([
  ['src/api/pages.ts', "the API's pages: public pages, the document page, the notes and the home page"],
  ['transports/web/html.ts', "the browser app's pages (its Eta layouts)"],
  ['app/bench/result.ts', "kw bench's HTML report, a file it writes"],
]);

test('an HTML page is framed in one module per edge (and a document is HTML in one: src/api/rich-html.ts)', () => {
  const framing = productionFiles().filter((f) => /<!doctype html/i.test(readFileSync(resolve(root, f), 'utf8')) && !f.startsWith('adapters/capture/'));
  assert.equal(framing.sort(), [...PAGE_FRAMES.keys()].sort(), 'a new page frame: render it through the module of its edge');
});

test.run();
