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

/** Paragraphs of a DOM subtree: the text of each block element that holds no other block element. */
function paragraphsOf(root: El): string[] {
  const out: string[] = [];
  const walk = (el: El): boolean => {
    let hasBlockChild = false;
    for (let i = 0; i < el.children.length; i++) if (walk(el.children[i]!)) hasBlockChild = true;
    const isBlock = BLOCK_TAGS.has(el.tagName.toUpperCase());
    if (isBlock && !hasBlockChild) {
      const text = el.tagName.toUpperCase() === 'PRE' ? (el.textContent ?? '').trim() : squash(el.textContent ?? '');
      if (text) out.push(text);
    }
    return isBlock || hasBlockChild;
  };
  if (!walk(root)) {
    const text = squash(root.textContent ?? '');
    if (text) out.push(text);
  }
  return out;
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
  try {
    Object.defineProperty(document, 'baseURI', { value: url, configurable: true });
    article = new Readability(document as unknown as Document, { charThreshold: 0 }).parse();
  } catch {
    article = null;
  }
  let paragraphs: string[] = [];
  if (article?.content) {
    const { document: content } = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`);
    paragraphs = paragraphsOf(content.body as unknown as El);
  }
  if (!paragraphs.length && body) paragraphs = paragraphsOf(body);
  return { title: squash(article?.title ?? '') || fallbackTitle, byline: article?.byline ? squash(article.byline) : null, paragraphs, loginWall };
}
