/**
 * The README is the user's guide and stays one: at most 250 lines, it names the two commands that work
 * on a fresh clone (`npm start`, `npm test`), and it links nowhere outside the repository. Every link of
 * the hand-written Markdown (README.md, docs/, bench/README.md and the module READMEs) is relative and
 * lands on a file of this repository, and on a heading of it when it names one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const README = join(root, 'README.md');
const MAX_LINES = 250;

function markdownUnder(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) markdownUnder(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

/** Every Markdown file of the repository outside node_modules and build output. */
function markdownFiles(): string[] {
  const files = [README];
  for (const dir of ['docs', 'bench', 'src', 'adapters', 'transports', 'app', 'fixtures', 'scripts']) {
    if (existsSync(join(root, dir))) markdownUnder(join(root, dir), files);
  }
  return files;
}

/** The text without code: fenced blocks and inline code spans show syntax and URLs, not links. */
const withoutCode = (text: string): string =>
  text
    .replace(/^```[^]*?^```/gm, '')
    .replace(/``[^`\n]+``/g, '')
    .replace(/`[^`\n]*`/g, '');

const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<a\s[^>]*href="([^"]+)"/g;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(path: string): Set<string> {
  const text = readFileSync(path, 'utf8').replace(/^```[^]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

/**
 * What is wrong with the links of one Markdown file at `file` whose text is `text`: a link to another
 * site, above the repository root, to a missing file, or to a heading the target does not have.
 */
function linkProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const m of withoutCode(text).matchAll(LINK)) {
    const target = (m[1] ?? m[2])!;
    const where = `${relative(root, file)}: ${target}`;
    if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) {
      problems.push(`${where} leaves the repository`);
      continue;
    }
    const [pathPart, anchor] = target.split('#') as [string, string | undefined];
    const path = pathPart === '' ? file : resolve(dirname(file), pathPart);
    if (relative(root, path).startsWith('..')) problems.push(`${where} points above the repository`);
    else if (!existsSync(path)) problems.push(`${where} does not exist`);
    else if (anchor && path.endsWith('.md') && !anchorsOf(path).has(anchor)) problems.push(`${where} names no heading there`);
  }
  return problems;
}

test('linkProblems finds links to other sites, above the root, to missing files and to missing headings', () => {
  const file = join(root, 'docs', 'example.md');
  const text = [
    '[site](https://example.com/x) [proto](//cdn.example/x) [mail](mailto:a@b.c)',
    '[up](../../shared/spec/api-contract.md) [gone](nothing-here.md) [heading](../README.md#no-such-heading)',
    '[fine](../README.md#status) [also fine](http-api.md) `[code](https://example.com)`',
    '```sh\ncurl https://example.com/[x](y)\n```',
  ].join('\n');
  assert.equal(linkProblems(file, text), [
    'docs/example.md: https://example.com/x leaves the repository',
    'docs/example.md: //cdn.example/x leaves the repository',
    'docs/example.md: mailto:a@b.c leaves the repository',
    'docs/example.md: ../../shared/spec/api-contract.md points above the repository',
    'docs/example.md: nothing-here.md does not exist',
    'docs/example.md: ../README.md#no-such-heading names no heading there',
  ]);
});

test(`README.md is a guide of at most ${MAX_LINES} lines`, () => {
  const lines = readFileSync(README, 'utf8').replace(/\n$/, '').split('\n').length;
  assert.ok(lines <= MAX_LINES, `README.md has ${lines} lines; move details to docs/ (design: docs/architecture.md, figures: bench/README.md)`);
});

test('README.md names the commands that work on a fresh clone: npm start and npm test', () => {
  const readme = readFileSync(README, 'utf8');
  for (const command of ['npm ci', 'npm start', 'npm test']) assert.ok(readme.includes(command), `README.md names ${command}`);
});

test('every link of the hand-written Markdown lands on a file (and heading) of this repository', () => {
  const files = markdownFiles();
  assert.ok(files.some((f) => f.endsWith(join('docs', 'architecture.md'))) && files.some((f) => f.endsWith(join('bench', 'README.md'))));
  const problems = files.flatMap((file) => linkProblems(file, readFileSync(file, 'utf8')));
  assert.equal(problems, []);
});

test.run();
