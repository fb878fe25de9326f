/**
 * Readable text of an HTML page: Mozilla's Readability (the Firefox reader view) over a linkedom
 * DOM, cut into paragraphs; and the sign-in wall check.
 * @remarks linkedom is a fast, spec-minded DOM for Node; Readability needs only a `document`.
 * A page counts as a sign-in wall when it has a password field and the text outside its forms is
 * short, or its forms hold at least half of the page's text.
 * @module
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import type { ExtractedText } from '../../src/library/capture-port.ts';

const BLOCK_TAGS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'LI', 'BLOCKQUOTE', 'PRE', 'TD', 'TH', 'DT', 'DD', 'FIGCAPTION', 'DIV', 'SECTION', 'ARTICLE', 'TABLE', 'UL', 'OL', 'DL', 'FIGURE', 'HEADER', 'FOOTER', 'ASIDE', 'MAIN', 'NAV', 'TR']);
const SHORT_PAGE = 600;
/**
 * Readability's work grows much faster than the page with nesting (1,000 nested `<div>`: 37 s on a
 * busy 2-core machine); a page nested deeper than this is cut into paragraphs without it.
 */
const READABILITY_MAX_DEPTH = 128;
/** …and so does a page of more elements than this (a 20,000-paragraph page: 4.5 s of Readability). */
const READABILITY_MAX_ELEMENTS = 10_000;

/** The encoding a byte order mark names (UTF-8, UTF-16LE, UTF-16BE), or null. */
export function bomEncoding(bytes: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/**
 * Decode HTML bytes: a byte order mark first (it wins over any label, as in the HTML standard), else
 * the declared charset, else a `<meta charset>` in the first 1024 bytes, else UTF-8.
 */
export function decodeHtml(bytes: Uint8Array, charset: string | null | undefined): string {
  let label = bomEncoding(bytes) ?? charset ?? null;
  if (!label) {
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
    label = /<meta[^>]+charset=["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head)?.[1] ?? null;
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

interface El {
  tagName: string;
  textContent: string | null;
  children: ArrayLike<El>;
}

/**
 * Paragraphs of a DOM subtree: the text of each block element that holds no other block element.
 * @remarks Linear and without recursion: linkedom computes `children` afresh on each access (so it
 * is read once per element, as an array), and a hostile page may nest elements without end.
 */
function paragraphsOf(root: El): string[] {
  const out: string[] = [];
  /** Post-order walk: an element is visited after its children; `blocky` tells whether any child is (or holds) a block. */
  const stack: { el: El; kids: El[] | null; blocky: boolean }[] = [{ el: root, kids: null, blocky: false }];
  let rootBlocky = false;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.kids === null) {
      top.kids = Array.from(top.el.children).reverse();
    }
    const next = top.kids.pop();
    if (next !== undefined) {
      stack.push({ el: next, kids: null, blocky: false });
      continue;
    }
    stack.pop();
    const tag = top.el.tagName.toUpperCase();
    const isBlock = BLOCK_TAGS.has(tag);
    if (isBlock && !top.blocky) {
      const text = tag === 'PRE' ? (top.el.textContent ?? '').trim() : squash(top.el.textContent ?? '');
      if (text) out.push(text);
    }
    const blocky = isBlock || top.blocky;
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.blocky ||= blocky;
    else rootBlocky = blocky;
  }
  if (!rootBlocky) {
    const text = squash(root.textContent ?? '');
    if (text) out.push(text);
  }
  return out;
}

/**
 * Whether Readability may read a page: it nests at most READABILITY_MAX_DEPTH deep and holds at most
 * READABILITY_MAX_ELEMENTS elements. Linear, without recursion, and stops as soon as either is passed.
 */
function readableShape(root: El): boolean {
  let elements = 0;
  const stack: [El, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [el, depth] = stack.pop()!;
    if (depth > READABILITY_MAX_DEPTH || ++elements > READABILITY_MAX_ELEMENTS) return false;
    for (const child of Array.from(el.children)) stack.push([child, depth + 1]);
  }
  return true;
}

/** Extract title, byline and paragraphs from an HTML string. */
export function extractHtml(html: string, url: string): ExtractedText {
  const { document } = parseHTML(html);
  const body = document.body as unknown as El | null;
  const bodyText = squash(body?.textContent ?? '');
  let formText = 0;
  let hasPassword = false;
  for (const form of Array.from(document.querySelectorAll('form'))) {
    if (form.querySelector('input[type="password" i]')) hasPassword = true;
    formText += squash(form.textContent ?? '').length;
  }
  if (!hasPassword && document.querySelector('input[type="password" i]')) hasPassword = true;
  const loginWall = hasPassword && (bodyText.length - formText < SHORT_PAGE || formText * 2 >= bodyText.length);
  const fallbackTitle = squash(document.title ?? '') || null;
  // Readability changes the document it reads, so it runs after the checks above.
  let article: ReturnType<Readability['parse']> = null;
  if (body && readableShape(body)) {
    try {
      Object.defineProperty(document, 'baseURI', { value: url, configurable: true });
      article = new Readability(document as unknown as Document, { charThreshold: 0 }).parse();
    } catch {
      article = null;
    }
  }
  let paragraphs: string[] = [];
  if (article?.content) {
    const { document: content } = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`);
    paragraphs = paragraphsOf(content.body as unknown as El);
  }
  if (!paragraphs.length && body) paragraphs = paragraphsOf(body);
  return { title: squash(article?.title ?? '') || fallbackTitle, byline: article?.byline ? squash(article.byline) : null, paragraphs, loginWall };
}
