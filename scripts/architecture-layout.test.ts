/**
 * docs/architecture.md's layout names what is there: every top-level folder of the repository and
 * every folder below src/, adapters/, transports/, bench/ and fixtures/ (a folder added without a
 * word in the layout fails here).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
/** The files git tracks (and the untracked ones it does not ignore): what a clone holds. */
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

/** The folders directly below `dir` ('.' for the top) that hold such files; hidden ones (.ci) left out. */
function folders(dir: string): string[] {
  const prefix = dir === '.' ? '' : `${dir}/`;
  const names = new Set<string>();
  for (const f of files) {
    if (!f.startsWith(prefix)) continue;
    const parts = f.slice(prefix.length).split('/');
    if (parts.length > 1 && !parts[0]!.startsWith('.')) names.add(parts[0]!);
  }
  return [...names].sort();
}

/** The layout block of docs/architecture.md. */
function layout(): string {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const block = /## Layout\n\n```\n([^]*?)```/.exec(text);
  assert.ok(block, 'docs/architecture.md has a "## Layout" section with a code block');
  return block[1]!;
}

/** The paragraph of the layout that starts with `top/`. */
function paragraphOf(text: string, top: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`${top}/`));
  assert.ok(start >= 0, `the layout has a paragraph for ${top}/`);
  const rest = lines.slice(start + 1).findIndex((l) => /^\S/.test(l));
  return lines.slice(start, rest === -1 ? undefined : start + 1 + rest).join('\n');
}

test('every top-level folder has its paragraph in the layout of docs/architecture.md', () => {
  const text = layout();
  const missing = folders('.').filter((name) => !text.split('\n').some((l) => l.startsWith(`${name}/`)));
  assert.equal(missing, [], 'top-level folders without a paragraph');
});

test('every folder below src/, adapters/, transports/, bench/ and fixtures/ is named in its paragraph', () => {
  const text = layout();
  const missing: string[] = [];
  for (const top of ['src', 'adapters', 'transports', 'bench', 'fixtures']) {
    const paragraph = paragraphOf(text, top);
    for (const name of folders(top)) {
      if (!new RegExp(`(^|[^\\w-])${name.replace(/[-]/g, '\\-')}([^\\w-]|$)`, 'm').test(paragraph.slice(top.length + 1))) missing.push(`${top}/${name}`);
    }
  }
  assert.equal(missing, [], 'folders the layout does not name');
});

test.run();
