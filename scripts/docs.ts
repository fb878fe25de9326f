/**
 * `npm run docs`: the API reference of the public entries, generated from their TSDoc by TypeDoc
 * (docs/typedoc.json) as Markdown into docs/api/, then kept inside the repository: a link to another
 * site (TypeDoc copies MDN links from the DOM's own comments) is reduced to its text. Also writes
 * docs/openapi.json, the OpenAPI document a server publishes at /openapi.json, for reading without one.
 * @module
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApi } from '../src/contract/openapi.ts';

const root = resolve(import.meta.dirname, '..');
/** docs/openapi.json as `npm run docs` writes it. */
export function openApiText(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}

const EXTERNAL_LINK = /\[([^\]]*)\]\((?:https?:)?\/\/[^)]*\)/g;

/** Replace every Markdown link to another site by its text. */
export function unlinkExternal(markdown: string): string {
  return markdown.replace(EXTERNAL_LINK, '$1');
}

async function markdownFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await markdownFiles(path)));
    else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await promisify(execFile)(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--options', join(root, 'docs/typedoc.json')], { cwd: root });
  const files = await markdownFiles(join(root, 'docs/api'));
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const kept = unlinkExternal(text);
    if (kept !== text) await writeFile(file, kept);
  }
  await writeFile(join(root, 'docs/openapi.json'), openApiText());
  console.log(`docs/api: ${files.length} pages; docs/openapi.json`);
}
