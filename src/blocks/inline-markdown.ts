/**
 * One block's inline Markdown: parsed into BlockNote inline content (with the block's citations),
 * and written back from BlockNote inline content.
 *
 * Dialect: CommonMark plus GFM strikethrough (`~~x~~`); raw HTML is text, bare URLs are text (no
 * linkify), no typographic replacements. Tables are recognised only to be refused.
 * @module
 */
import { WINDOW, blockTokens, inlineTokens, isMdAsciiPunct, isPunctCharCode, isValidEntityCode, isWhiteSpace, type Token } from './inline-markdown-parser.ts';

/** BlockNote's boolean text styles that Markdown carries (key order as BlockNote emits them). */
export interface Styles {
  bold?: true;
  italic?: true;
  strike?: true;
  code?: true;
}

/** BlockNote styled text. */
export interface StyledText {
  type: 'text';
  text: string;
  styles: Styles;
}

/** BlockNote link inline content. */
export interface InlineLink {
  type: 'link';
  href: string;
  content: StyledText[];
}

/** BlockNote inline content of the default schema, as far as Markdown can carry it. */
export type InlineContent = StyledText | InlineLink;

/** Result of {@link parseInline}. */
export type InlineResult =
  | { ok: true; content: InlineContent[]; citations: string[] }
  | { ok: false; message: string };

const BOLD = 1;
const ITALIC = 2;
const STRIKE = 4;
const CODE = 8;

/**
 * The styles of each style mask, made once and frozen: runs share them (a 41,000-character paragraph
 * can have 20,000 runs), and parse results are never mutated by callers.
 */
const STYLES: readonly Styles[] = Array.from({ length: 16 }, (_, mask) => {
  const s: Styles = {};
  if (mask & BOLD) s.bold = true;
  if (mask & ITALIC) s.italic = true;
  if (mask & STRIKE) s.strike = true;
  if (mask & CODE) s.code = true;
  return Object.freeze(s);
});
const stylesOf = (mask: number): Styles => STYLES[mask]!;

/** Text with nothing Markdown could read as syntax: the whole (trimmed) string is one plain run. */
const PLAIN = /^[^\\`*_~[\]!<>&|#=+\-\n\r\0]*$/;
const LIST_START = /^\d{1,9}[.)]/;
/** A first character that could open a block other than a paragraph (or a reference definition). */
const BLOCK_START = /^(?:[#>*+\-=_`~|[<]|\d{1,9}[.)])/;
const LEADING_OK = /^(?:[ \t]*\n)*[ ]{0,3}$/;
const TRAILING_OK = /^[ \t\n]*$/;

/** The fast path must not hide what markdown-it sees at the edges: indented code, NBSP-only lines. */
function plainEdges(markdown: string, trimmed: string): boolean {
  if (markdown.length === trimmed.length) return true;
  const start = markdown.indexOf(trimmed);
  return LEADING_OK.test(markdown.slice(0, start)) && TRAILING_OK.test(markdown.slice(start + trimmed.length));
}

const PREFIX = 'markdown must be exactly one block of inline content; found ';
const FOUND: Record<string, string> = {
  heading_open: 'a heading — set type to heading, or put further blocks in children',
  bullet_list_open: 'a bullet list — send one bulletListItem (or checkListItem) block per item and nest items in children',
  ordered_list_open: 'a numbered list — send one numberedListItem block per item and nest items in children',
  blockquote_open: 'a block quote — set type to quote, or put further blocks in children',
  fence: 'a fenced code block — send a codeBlock block with code and language',
  code_block: 'an indented code block (a line indented by 4 or more spaces) — remove the indentation, or send a codeBlock block',
  hr: 'a thematic break (a line of ---, *** or ___) — escape it (\\---) if it is text; blocks cannot hold a break',
  table_open: 'a table — send a table block with rows',
  html_block: 'an HTML block — write it as text',
  paragraph_open: 'a second paragraph (a blank line starts a new block) — send each paragraph as its own block, or put further blocks in children',
};

function refuse(tokens: Token[], references: boolean): { ok: false; message: string } {
  if (references) {
    return { ok: false, message: `${PREFIX}a link reference definition ([label]: url) — write the link inline as [text](url)` };
  }
  const first = tokens[0]!;
  const offending = first.type === 'paragraph_open' ? tokens.find((t, i) => i > 0 && t.level === 0 && t.nesting !== -1) : first;
  const what = FOUND[offending?.type ?? ''] ?? `a ${offending?.type ?? 'block'} block — put further blocks in children`;
  const lead = offending !== first && offending?.type !== 'paragraph_open' ? 'a paragraph followed by ' : '';
  return { ok: false, message: PREFIX + lead + what };
}

/**
 * Parse one block's inline Markdown.
 * @returns the BlockNote inline content and the block's citations — the distinct link targets that
 * are exact https URLs, in order of first appearance — or why the text is not one block.
 * @remarks Exactly one paragraph (or nothing) is accepted; surrounding whitespace is ignored. Soft and
 * hard line breaks become "\n"; an image `![alt](src)` becomes a link to src whose text is the alt
 * text (or src when the alt text is empty) and counts like any link. Runs on every block edit: plain
 * text skips markdown-it entirely, one line that cannot open a block skips its block parser, and
 * the paragraph's inline source is tokenized window by window (see inline-markdown-parser.ts) and
 * walked as it goes.
 */
export function parseInline(markdown: string): InlineResult {
  // A block's Markdown is parsed when the mutation is validated and again when the block is
  // rendered: remember the last few results (they are never mutated by callers).
  const hit = recent.get(markdown);
  if (hit !== undefined) return hit;
  const result = parseUncached(markdown);
  if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!);
  recent.set(markdown, result);
  return result;
}

const RECENT_MAX = 64;
const recent = new Map<string, InlineResult>();

/**
 * {@link parseInline} without its cache; with `shortcuts` false, without the paths that skip
 * markdown-it (plain text, simple emphasis); with `reference`, as the stock markdown-it parser of the
 * dialect reads the whole text (no shortcut, no pruned delimiters, no windows); `window` sets the
 * window size of the inline tokenizer. Exported for the tests that pin those paths to the reference.
 * @internal
 */
export function parseInlineUncached(markdown: string, shortcuts = true, reference = false, window = WINDOW): InlineResult {
  return parseUncached(markdown, shortcuts, reference, window);
}

function parseUncached(markdown: string, shortcuts = true, reference = false, window = WINDOW): InlineResult {
  const trimmed = markdown.trim();
  if (trimmed === '') return { ok: true, content: [], citations: [] };
  if (reference) {
    const inline = paragraph(markdown, true);
    if (isResult(inline)) return inline;
    const w = newWalk();
    walkTokens(w, inline.children ?? []);
    return { ok: true, content: w.content, citations: w.citations };
  }
  if (shortcuts && PLAIN.test(trimmed) && !LIST_START.test(trimmed) && plainEdges(markdown, trimmed)) {
    return { ok: true, content: [{ type: 'text', text: trimmed, styles: {} }], citations: [] };
  }
  const simple = shortcuts ? simpleEmphasis(trimmed) : null;
  if (simple !== null && !LIST_START.test(trimmed) && plainEdges(markdown, trimmed)) return simple;
  // One line that cannot open any block (and that markdown-it's normalization leaves as it is) is the
  // paragraph's inline source itself: skip the block parser.
  const oneLine = !LINE_BREAK_OR_NUL.test(trimmed) && !BLOCK_START.test(trimmed) && plainEdges(markdown, trimmed);
  const inline = oneLine ? trimmed : paragraph(markdown, false);
  if (typeof inline !== 'string' && isResult(inline)) return inline;
  let w!: Walk;
  inlineTokens(
    typeof inline === 'string' ? inline : inline.content,
    () => {
      w = newWalk();
      return (tokens) => walkTokens(w, tokens);
    },
    window,
  );
  return { ok: true, content: w.content, citations: w.citations };
}

const LINE_BREAK_OR_NUL = /[\n\r\0]/;

/** The text's one paragraph (its inline token), or the result when there is none: nothing, or a refusal. */
function paragraph(markdown: string, reference: boolean): Token | InlineResult {
  const { tokens, references } = blockTokens(markdown, reference);
  if (tokens.length === 0 && !references) return { ok: true, content: [], citations: [] };
  if (tokens.length !== 3 || tokens[0]!.type !== 'paragraph_open' || references) return refuse(tokens, references);
  return tokens[1]!;
}

const isResult = (x: Token | InlineResult): x is InlineResult => 'ok' in x;

/** A character of {@link PLAIN} text: nothing Markdown could read as syntax. */
function isPlainChar(c: number): boolean {
  switch (c) {
    case 0x5c: // \
    case 0x60: // `
    case 0x2a: // *
    case 0x5f: // _
    case 0x7e: // ~
    case 0x5b: // [
    case 0x5d: // ]
    case 0x21: // !
    case 0x3c: // <
    case 0x3e: // >
    case 0x26: // &
    case 0x7c: // |
    case 0x23: // #
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x0a:
    case 0x0d:
    case 0x00:
      return false;
    default:
      return true;
  }
}

/** A space or ASCII punctuation that is plain text: an emphasis run next to it flanks one way only. */
function isFlankingBoundary(c: number): boolean {
  return c === 0x20 || (((c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)) && isPlainChar(c));
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/**
 * The common case of styled text without markdown-it: one line of plain text with `**bold**` and
 * `*italic*` spans whose delimiters can only open (start, space or plain punctuation before, a letter
 * or digit after) or only close (the mirror image), around plain text without `*`. For such text
 * CommonMark's delimiter algorithm pairs each opener with the next closer, so the result is known
 * without running it. Anything else returns null and goes through markdown-it.
 * @remarks Pinned against markdown-it by a randomised comparison in inline-markdown.test.ts.
 */
function simpleEmphasis(t: string): InlineResult | null {
  const content: InlineContent[] = [];
  let plainFrom = 0;
  let i = 0;
  while (i < t.length) {
    const c = t.charCodeAt(i);
    if (c !== 0x2a) {
      if (!isPlainChar(c)) return null;
      i++;
      continue;
    }
    const bold = t.charCodeAt(i + 1) === 0x2a;
    const open = i + (bold ? 2 : 1);
    if (i > 0 && !isFlankingBoundary(t.charCodeAt(i - 1))) return null;
    if (!isAsciiAlnum(t.charCodeAt(open))) return null;
    let close = open;
    while (close < t.length && t.charCodeAt(close) !== 0x2a) {
      if (!isPlainChar(t.charCodeAt(close))) return null;
      close++;
    }
    if (close >= t.length || !isAsciiAlnum(t.charCodeAt(close - 1))) return null;
    if (bold && t.charCodeAt(close + 1) !== 0x2a) return null;
    const after = close + (bold ? 2 : 1);
    if (after < t.length && !isFlankingBoundary(t.charCodeAt(after))) return null;
    if (plainFrom < i) content.push({ type: 'text', text: t.slice(plainFrom, i), styles: {} });
    content.push({ type: 'text', text: t.slice(open, close), styles: bold ? { bold: true } : { italic: true } });
    i = plainFrom = after;
  }
  if (content.length === 0) return null;
  if (plainFrom < t.length) content.push({ type: 'text', text: t.slice(plainFrom), styles: {} });
  return { ok: true, content, citations: [] };
}

function altText(children: Token[] | null): string {
  let s = '';
  for (const t of children ?? []) {
    if (t.type === 'text' || t.type === 'text_special' || t.type === 'code_inline') s += t.content;
    else if (t.type === 'softbreak' || t.type === 'hardbreak') s += '\n';
    else if (t.type === 'image') s += altText(t.children);
  }
  return s;
}

/** Walk state; module-level helpers instead of per-call closures keep the hot path allocation-light. */
interface Walk {
  content: InlineContent[];
  citations: string[];
  /** the link being filled, or null */
  link: InlineLink | null;
  /** style mask of the last text run of the current target, -1 when it is not text */
  lastMask: number;
  // Counters, not bits: emphasis can nest inside itself (`**a __b__ c**`).
  bold: number;
  italic: number;
  strike: number;
  /** style mask of the text at this point */
  mask: number;
}

const newWalk = (): Walk => ({ content: [], citations: [], link: null, lastMask: -1, bold: 0, italic: 0, strike: 0, mask: 0 });

function pushRun(w: Walk, text: string, mask: number): void {
  if (text === '') return;
  const target: InlineContent[] = w.link ? w.link.content : w.content;
  if (mask === w.lastMask) {
    (target[target.length - 1] as StyledText).text += text;
    return;
  }
  target.push({ type: 'text', text, styles: stylesOf(mask) });
  w.lastMask = mask;
}

function restyle(w: Walk): void {
  w.mask = (w.bold > 0 ? BOLD : 0) | (w.italic > 0 ? ITALIC : 0) | (w.strike > 0 ? STRIKE : 0);
}

function cite(w: Walk, href: string): void {
  if (isCitation(href) && !w.citations.includes(href)) w.citations.push(href);
}

/**
 * Add a stretch of inline tokens to the content. Adjacent text of equal style becomes one run, so it
 * does not matter where markdown-it (or a window edge) split the text into tokens.
 */
function walkTokens(w: Walk, children: Token[]): void {
  for (const t of children) {
    switch (t.type) {
      case 'text':
      case 'text_special':
        pushRun(w, t.content, w.mask);
        break;
      case 'code_inline':
        pushRun(w, t.content, w.mask | CODE);
        break;
      case 'softbreak':
      case 'hardbreak':
        pushRun(w, '\n', w.mask);
        break;
      case 'strong_open':
      case 'strong_close':
        w.bold += t.nesting;
        restyle(w);
        break;
      case 'em_open':
      case 'em_close':
        w.italic += t.nesting;
        restyle(w);
        break;
      case 's_open':
      case 's_close':
        w.strike += t.nesting;
        restyle(w);
        break;
      case 'link_open': {
        const href = t.attrGet('href') ?? '';
        w.link = { type: 'link', href, content: [] };
        w.content.push(w.link);
        w.lastMask = -1;
        cite(w, href);
        break;
      }
      case 'link_close':
        w.link = null;
        w.lastMask = -1;
        break;
      case 'image': {
        const src = t.attrGet('src') ?? '';
        const alt = altText(t.children);
        if (w.link) {
          pushRun(w, alt, w.mask);
        } else {
          w.content.push({ type: 'link', href: src, content: [{ type: 'text', text: alt || src, styles: stylesOf(w.mask) }] });
          w.lastMask = -1;
          cite(w, src);
        }
        break;
      }
      default:
        if (t.content) pushRun(w, t.content, w.mask);
    }
  }
}

/**
 * True when `href` is a citation: an absolute https URL exactly as written — it starts with
 * `https://`, holds no whitespace or control characters, and `new URL` accepts it with a host.
 */
export function isCitation(href: string): boolean {
  if (!/^https:\/\/[^\s\u0000-\u001f\u007f]+$/i.test(href)) return false;
  try {
    const url = new URL(href);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing inline content back as Markdown
//
// The text is built as a list of parts — characters, emphasis delimiters and raw pieces (code spans,
// link brackets) — and then repaired where CommonMark would read it differently: characters that
// would start a block at a line start, whitespace the paragraph would trim, and delimiters that
// would not open or close because of their neighbours (the "flanking" rules). A neighbour is
// repaired by writing it as a numeric character reference (`&#97;`), which reads back as the same
// character but counts as punctuation next to a delimiter.
// ---------------------------------------------------------------------------------------------

const LITERAL = 0;
const ESCAPED = 1; // written as \x
const ENTITY = 2; // written as &#N;
const NEWLINE = 3; // a soft line break

interface CharPart {
  k: 'c';
  cp: number;
  enc: number;
}
interface DelimPart {
  k: 'd';
  mark: number;
  open: boolean;
  ch: string;
  pair: number;
}
interface RawPart {
  k: 'r';
  s: string;
}
type Part = CharPart | DelimPart | RawPart;

const codes = (s: string): Set<number> => new Set([...s].map((c) => c.codePointAt(0)!));
const ALWAYS_ESCAPE = codes('\\`*_~[]<|');
const LINE_START_ESCAPE = codes('#>-+=:');
const ENTITY_AHEAD = /^&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/;
const JS_SPACE = /\s/;

const isPunct = (cp: number): boolean => isMdAsciiPunct(cp) || isPunctCharCode(cp);
const isSpaceCp = (cp: number): boolean => JS_SPACE.test(String.fromCodePoint(cp));

/** markdown-it reads a broken surrogate pair as U+FFFD (a symbol, so punctuation) next to a delimiter. */
const seen = (cp: number): number => (cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp);

function firstCp(p: Part): number {
  if (p.k === 'd') return p.ch.charCodeAt(0);
  if (p.k === 'r') return p.s.codePointAt(0)!;
  return p.enc === ESCAPED ? 0x5c : p.enc === ENTITY ? 0x26 : seen(p.cp);
}

function lastCp(p: Part): number {
  if (p.k === 'd') return p.ch.charCodeAt(0);
  if (p.k === 'r') return p.s.charCodeAt(p.s.length - 1);
  return p.enc === ENTITY ? 0x3b : seen(p.cp);
}

/** Write a character as a numeric reference; false when it cannot be (not a character or already escaped). */
function encode(p: Part | undefined): boolean {
  if (!p || p.k !== 'c' || p.enc === ESCAPED || p.enc === ENTITY || !isValidEntityCode(p.cp)) return false;
  p.enc = ENTITY;
  return true;
}

function pushText(text: string, parts: Part[]): void {
  let i = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    let enc = LITERAL;
    if (cp === 0x0a) enc = NEWLINE;
    else if (cp === 0x0d) enc = ENTITY;
    else if (ALWAYS_ESCAPE.has(cp)) enc = ESCAPED;
    else if (cp === 0x26 && ENTITY_AHEAD.test(text.slice(i))) enc = ESCAPED;
    parts.push({ k: 'c', cp, enc });
    i += ch.length;
  }
}

/** A code span; line breaks cannot be kept (CommonMark reads them as spaces). */
function codeSpan(text: string): string {
  const t = text.replace(/\r\n|\r|\n/g, ' ');
  let longest = 0;
  for (const run of t.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  // markdown-it strips one space from each end whenever /^ (.+) $/ matches (even all spaces).
  const pad = t.startsWith('`') || t.endsWith('`') || /^ (.+) $/.test(t);
  return pad ? `${fence} ${t} ${fence}` : fence + t + fence;
}

const DELIM: Record<number, string> = { [BOLD]: '**', [ITALIC]: '*', [STRIKE]: '~~' };

const EDGE_SPACE = /^(\s*)([\s\S]*?)(\s*)$/;

/**
 * Readable mode: whitespace at the edge of an emphasised run moves outside the delimiters (it keeps
 * only the styles it shares with its neighbour), so `**bold **text` is written `**bold** text`
 * rather than with character references. Only the styling of that whitespace changes.
 */
function shiftEdgeSpace(items: readonly StyledText[]): StyledText[] {
  const runs = items.filter((r) => r.text !== '');
  const out: StyledText[] = [];
  runs.forEach((r, i) => {
    const { bold, italic, strike } = r.styles;
    const [, lead = '', middle = '', trail = ''] = EDGE_SPACE.exec(r.text) ?? [];
    if (r.styles.code || !(bold || italic || strike) || (lead === '' && trail === '') || middle === '') {
      out.push(r);
      return;
    }
    const shared = (other: StyledText | undefined): Styles => {
      const s: Styles = {};
      if (bold && other?.styles.bold) s.bold = true;
      if (italic && other?.styles.italic) s.italic = true;
      if (strike && other?.styles.strike) s.strike = true;
      return s;
    };
    if (lead) out.push({ type: 'text', text: lead, styles: shared(runs[i - 1]) });
    out.push({ type: 'text', text: middle, styles: r.styles });
    if (trail) out.push({ type: 'text', text: trail, styles: shared(runs[i + 1]) });
  });
  return out;
}

/** Styled runs with emphasis delimiters shared across runs; marks that last longest open first. */
function pushRuns(input: readonly StyledText[], parts: Part[], exact: boolean): void {
  const items = exact ? input : shiftEdgeSpace(input);
  const runs: StyledText[] = [];
  const masks: number[] = [];
  let lastFull = -1;
  for (const r of items) {
    if (r.text === '') continue;
    const m = (r.styles.bold ? BOLD : 0) | (r.styles.italic ? ITALIC : 0) | (r.styles.strike ? STRIKE : 0);
    const full = m | (r.styles.code ? CODE : 0);
    // Equal neighbours are one run: two code spans side by side would fuse into one broken span.
    if (full === lastFull) runs[runs.length - 1] = { ...runs[runs.length - 1]!, text: runs[runs.length - 1]!.text + r.text };
    else {
      runs.push(r);
      masks.push(m);
    }
    lastFull = full;
  }
  const stack: number[] = [];
  const openAt: number[] = [];
  const close = (): void => {
    const mark = stack.pop()!;
    const opener = openAt.pop()!;
    (parts[opener] as DelimPart).pair = parts.length;
    parts.push({ k: 'd', mark, open: false, ch: DELIM[mark]!, pair: opener });
  };
  runs.forEach((run, i) => {
    const want = masks[i]!;
    let keep = 0;
    while (keep < stack.length && want & stack[keep]!) keep++;
    while (stack.length > keep) close();
    const lasting = (m: number): number => {
      let j = i;
      while (j < runs.length && masks[j]! & m) j++;
      return j - i;
    };
    const missing = [BOLD, STRIKE, ITALIC].filter((m) => want & m && !stack.includes(m));
    missing.sort((a, b) => lasting(b) - lasting(a));
    for (const m of missing) {
      stack.push(m);
      openAt.push(parts.length);
      parts.push({ k: 'd', mark: m, open: true, ch: DELIM[m]!, pair: -1 });
    }
    if (run.styles.code) parts.push({ k: 'r', s: codeSpan(run.text) });
    else pushText(run.text, parts);
  });
  while (stack.length) close();
}

function destination(href: string): string {
  const amp = (s: string): string => s.replace(/&/g, (m, at: number) => (ENTITY_AHEAD.test(s.slice(at)) ? '\\&' : m));
  if (/[\s<>\u0000-\u001f\u007f]/.test(href)) {
    return `<${amp(href.replace(/[\\<>]/g, '\\$&')).replace(/\n/g, '&#10;').replace(/\r/g, '&#13;')}>`;
  }
  return amp(href.replace(/[\\()]/g, '\\$&'));
}

/** Characters that would start a block (or be trimmed) at the start of a line. */
function repairLineStarts(parts: Part[]): void {
  let lineStart = true;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    const wasBreak = p.k === 'c' && p.enc === NEWLINE;
    if (lineStart && p.k === 'c' && (p.enc === LITERAL || p.enc === NEWLINE)) {
      if (isSpaceCp(p.cp)) p.enc = ENTITY;
      else if (LINE_START_ESCAPE.has(p.cp)) p.enc = ESCAPED;
      else if (p.cp >= 0x30 && p.cp <= 0x39) {
        let j = i;
        while (j < parts.length && j - i < 10 && isDigitPart(parts[j]!)) j++;
        const after = parts[j];
        if (after?.k === 'c' && after.enc === LITERAL && (after.cp === 0x2e || after.cp === 0x29)) after.enc = ESCAPED;
      }
    }
    lineStart = wasBreak && p.k === 'c' && p.enc === NEWLINE;
  }
  // Whitespace the paragraph (or a line break) would trim.
  const last = parts[parts.length - 1];
  if (last?.k === 'c' && isSpaceCp(last.cp)) encode(last);
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i]!;
    const prev = parts[i - 1]!;
    if (p.k === 'c' && p.enc === NEWLINE && prev.k === 'c' && prev.enc === LITERAL && isSpaceCp(prev.cp)) encode(prev);
    // `!` right before a link would make it an image.
    if (p.k === 'r' && p.s === '[' && prev.k === 'c' && prev.enc === LITERAL && prev.cp === 0x21) prev.enc = ESCAPED;
  }
}

const isDigitPart = (p: Part): boolean => p.k === 'c' && p.enc === LITERAL && p.cp >= 0x30 && p.cp <= 0x39;

/** Italic is `*` unless it touches a bold `**`, where `_` keeps the two runs apart. */
function chooseItalic(parts: Part[]): void {
  const touchesBold = (i: number): boolean =>
    [parts[i - 1], parts[i + 1]].some((q) => q?.k === 'd' && q.mark === BOLD);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.k !== 'd' || p.mark !== ITALIC || !p.open) continue;
    if (touchesBold(i) || touchesBold(p.pair)) {
      p.ch = '_';
      (parts[p.pair] as DelimPart).ch = '_';
    }
  }
}

/** Make every opener left-flanking and every closer right-flanking (CommonMark 6.2). */
function repairFlanking(parts: Part[]): void {
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (p.k !== 'd') continue;
      const prev = parts[i - 1];
      const next = parts[i + 1];
      const pc = prev ? lastCp(prev) : 0x20;
      const nc = next ? firstCp(next) : 0x20;
      const pw = isWhiteSpace(pc);
      const nw = isWhiteSpace(nc);
      const pp = isPunct(pc);
      const np = isPunct(nc);
      let fix: Part | undefined;
      if (p.open) {
        if (nw) fix = next;
        else if (np && !pw && !pp) fix = prev;
        else if (p.ch === '_' && !pw && !pp) fix = prev; // `_` must not also be right-flanking
      } else {
        if (pw) fix = prev;
        else if (pp && !nw && !np) fix = next;
        else if (p.ch === '_' && !nw && !np) fix = next; // `_` must not also be left-flanking
      }
      if (fix && encode(fix)) changed = true;
    }
  }
}

function render(parts: readonly Part[]): string {
  let out = '';
  for (const p of parts) {
    if (p.k === 'd') out += p.ch;
    else if (p.k === 'r') out += p.s;
    else if (p.enc === LITERAL) out += String.fromCodePoint(p.cp);
    else if (p.enc === ESCAPED) out += '\\' + String.fromCodePoint(p.cp);
    else if (p.enc === ENTITY) out += `&#${p.cp};`;
    else out += '\n';
  }
  return out;
}

/**
 * Write BlockNote inline content as one block's inline Markdown (the inverse of {@link parseInline}).
 * @remarks `parseInline(inlineToMarkdown(c))` gives back `c` (with adjacent runs of equal styles
 * merged) for text, bold, italic, strike, code and links, except what CommonMark cannot say: a line
 * break inside code (read as a space), control characters, and link targets the parser refuses
 * (`javascript:` …), and a code span holding "]" as the first thing of a link that starts the text
 * (it would read as a reference definition). Exactness costs readability where emphasis meets
 * whitespace or punctuation (`unde&#114;**&#32;x**`); `{ exact: false }` moves edge whitespace out of
 * emphasis instead, changing only the styling of that whitespace. Callers that need exactness compare
 * the round trip and keep the JSON otherwise.
 */
export function inlineToMarkdown(content: readonly InlineContent[], options: { exact?: boolean } = {}): string {
  const exact = options.exact ?? true;
  const parts: Part[] = [];
  let run: StyledText[] = [];
  for (const item of content) {
    if (item.type === 'text') {
      run.push(item);
    } else if (item.type === 'link') {
      pushRuns(run, parts, exact);
      run = [];
      parts.push({ k: 'r', s: '[' });
      pushRuns(item.content, parts, exact);
      parts.push({ k: 'r', s: `](${destination(item.href)})` });
    }
  }
  pushRuns(run, parts, exact);
  repairLineStarts(parts);
  chooseItalic(parts);
  repairFlanking(parts);
  return render(parts);
}
