/**
 * markdown-it set up for one block's inline Markdown, and the inline tokens of a long text produced
 * window by window.
 *
 * **The markdown-it boundary.** This is the only module of the engine that imports markdown-it, and
 * the only one that reaches into its internals: the inline rule chains (`inline.ruler` /
 * `inline.ruler2` and their rules `emphasis`, `link`, `image`, `balance_pairs`, `fragments_join`,
 * `text_join`, `html_inline`), `StateInline` (its `delimiters`, `tokens_meta`, `pending`, `pos`,
 * `posMax`, `scanDelims`, `push`), `inline.State` and `inline.tokenize`, `helpers.parseLinkLabel`,
 * `utils` (the character classes), and the `references` a block parse leaves in its env. Those are
 * not covered by markdown-it's semver, so package.json pins markdown-it to one exact version (a test,
 * scripts/markdown-it-pin.test.ts, fails on a range), and the property tests beside this module
 * (src/blocks/inline-markdown*.test.ts) compare every fast path with {@link referenceParser}, the
 * stock parser of the dialect. When upgrading markdown-it: change the pin, compare `balancePairs`
 * with `lib/rules_inline/balance_pairs.mjs` and `emphasisTokenize` with `lib/rules_inline/emphasis.mjs`,
 * and run those tests. Everything else (inline-markdown.ts) reads only tokens, through the exports here.
 *
 * What keeps text built to stress the parser (41,000 characters of `**a**a`, `_a`, `*`, `[a](`, …)
 * cheap, without changing what it reads as (the tests compare with {@link referenceParser}):
 * - markdown-it's emphasis tokenizer is replaced by one that leaves as plain text the `*` / `_`
 *   characters that can never pair (a run that can neither open nor close, or the part of a
 *   one-sided run beyond the number of same characters on the side it could pair with), where
 *   markdown-it makes a token and a delimiter for every one; it also scans a run between ASCII
 *   characters without markdown-it's Unicode punctuation regexes;
 * - the link and image rules are skipped where no `)` follows (their failed attempts rescan the
 *   text after every `[`);
 * - a long text is tokenized in windows of up to a few thousand characters, each kept only when
 *   nothing in it can reach past its end, so that each window's tokens are walked and dropped while
 *   they are young (on `**a**a`, ~9 instead of ~21 ms of CPU per parse: the tokens of one
 *   41,000-character parse outlive young-generation collections, which copy them).
 * @module
 */
import MarkdownIt from 'markdown-it';
import type { StateInline, Token } from 'markdown-it';

/** A markdown-it token: what a parse hands to its readers. */
export type { Token };

const BAD_PROTOCOL = /^(vbscript|javascript|file|data):/;
const GOOD_DATA = /^data:image\/(gif|png|jpeg|webp);/;

/**
 * Links keep their target as written (markdown-it would percent-encode it). Without that encoding the
 * stock check could be dodged with control characters (`java&#9;script:`), which browsers drop, so
 * they are dropped here too before the protocol is checked.
 */
function isSafeHref(url: string): boolean {
  if (!url.includes(':')) return true; // no protocol at all
  const s = url.replace(/[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g, '').toLowerCase();
  return BAD_PROTOCOL.test(s) ? GOOD_DATA.test(s) : true;
}

/** The dialect: CommonMark plus GFM strikethrough (and tables, to refuse them); no raw HTML, no linkify. */
function newParser(): MarkdownIt {
  const parser = new MarkdownIt('commonmark', { html: false, linkify: false, typographer: false }).enable(['strikethrough', 'table']);
  parser.normalizeLink = (url: string) => url;
  parser.normalizeLinkText = (url: string) => url;
  parser.validateLink = isSafeHref;
  return parser;
}

/** The stock parser of the dialect, every rule as markdown-it has it: the reference the others are tested against. */
export const referenceParser = newParser();

/** The block structure only: inline tokens keep their source in `content` and get no children. */
const blockParser = newParser().disable(['inline', 'text_join']);

/**
 * The block tokens of `markdown`, and whether it defined link references (a block must not).
 * @param inline true: inline tokens get their children, as the stock parser of the dialect reads
 * them; false: they keep only their source in `content` (for {@link inlineTokens}).
 */
export function blockTokens(markdown: string, inline: boolean): { tokens: Token[]; references: boolean } {
  const env: { references?: unknown } = {};
  const tokens = (inline ? referenceParser : blockParser).parse(markdown, env);
  return { tokens, references: env.references !== undefined };
}

/** markdown-it's character classes (CommonMark's whitespace and punctuation, entity code points). */
export const { isWhiteSpace, isMdAsciiPunct, isPunctCharCode, isValidEntityCode } = referenceParser.utils;

/**
 * Inline parsers. Neither joins adjacent text tokens (the walk over the tokens merges runs of equal
 * style anyway) and raw HTML is off, so its rule is dropped.
 */
function newInlineParser(): MarkdownIt {
  const parser = newParser().disable(['fragments_join', 'text_join', 'html_inline']);
  const rules = parser.inline.ruler;
  rules.at('emphasis', emphasisTokenize);
  rules.at('link', needsParen(stockRule('link'), 0, true));
  rules.at('image', needsParen(stockRule('image'), 1, false));
  parser.inline.ruler2.at('balance_pairs', balancePairs);
  return parser;
}
const inlineParser = newInlineParser();
/**
 * The inline parser without the link and image rules, for text without a backtick that has no `]`
 * or no `)`: an inline link needs both (and reference links need definitions, which a block never
 * has). On long runs of `[`, `![` or `[a](` the failed attempts of those rules are most of
 * markdown-it's time. The tokens are the same (an unmatched `[` is literal text either way). With a
 * backtick they need not be: the link rule's label scan fills the code-span rule's cache, and
 * markdown-it reads "[`[`[``" differently with and without it.
 */
const inlineParserNoLinks = newInlineParser().disable(['link', 'image']);
const canLink = (src: string): boolean => src.includes('`') || (src.includes(']') && src.includes(')'));

type InlineRule = (state: StateInline, silent: boolean) => boolean;

/** markdown-it's own inline rule of that name. */
function stockRule(name: string): InlineRule {
  const parser = new MarkdownIt();
  parser.inline.ruler.enableOnly([name]);
  return parser.inline.ruler.getRules('')[0]!;
}

/**
 * The link or image rule, skipped where no `)` follows the label's `[` (an inline link needs one,
 * and a block has no reference definitions): on `[a](` × 10,000 markdown-it scans each failed
 * destination through up to 32 nested `(`. Where a backtick follows, the label is still scanned as
 * the rule would, for the code-span cache that scan fills (see {@link inlineParserNoLinks}).
 */
function needsParen(rule: InlineRule, labelAt: number, disableNested: boolean): InlineRule {
  return (state, silent) => {
    const label = state.pos + labelAt;
    const src = state.src;
    if (src.charCodeAt(label) !== 0x5b || (labelAt > 0 && src.charCodeAt(state.pos) !== 0x21)) return false;
    const t = tallyOf(state);
    if (t.lastParen > label) return rule(state, silent);
    if (t.lastBacktick > label) state.md.helpers.parseLinkLabel(state, label, disableNested);
    return false;
  };
}

const STAR = 0x2a;
const UNDERSCORE = 0x5f;

/**
 * Counts of `*` and `_` in the text a parse state reads: in all, and before `at` (a cursor that only
 * moves on). A window's state shares the tally of the whole text, so that what it prunes does not
 * depend on where the window ends.
 */
interface Tally {
  src: string;
  /** last `)` and last backtick in the text (-1 when none) */
  lastParen: number;
  lastBacktick: number;
  /** -1 until a run first needs them */
  stars: number;
  underscores: number;
  at: number;
  starsBefore: number;
  underscoresBefore: number;
}
const tallies = new WeakMap<StateInline, Tally>();

const newTally = (src: string): Tally => ({
  src,
  lastParen: src.lastIndexOf(')'),
  lastBacktick: src.lastIndexOf('`'),
  stars: -1,
  underscores: -1,
  at: 0,
  starsBefore: 0,
  underscoresBefore: 0,
});

/** The state {@link tallyOf} last answered for, and its tally: runs of one window ask again and again. */
let lastState: StateInline | null = null;
let lastTally: Tally | null = null;

function tallyOf(state: StateInline): Tally {
  if (state === lastState) return lastTally!;
  let t = tallies.get(state);
  if (t === undefined) {
    t = newTally(state.src);
    tallies.set(state, t);
  }
  lastState = state;
  lastTally = t;
  return t;
}

function tallyAt(state: StateInline, pos: number): Tally {
  const t = tallyOf(state);
  const src = t.src;
  if (t.stars < 0) {
    t.stars = 0;
    t.underscores = 0;
    for (let i = 0; i < src.length; i++) {
      const c = src.charCodeAt(i);
      if (c === STAR) t.stars++;
      else if (c === UNDERSCORE) t.underscores++;
    }
  }
  if (pos < t.at) {
    t.at = 0;
    t.starsBefore = 0;
    t.underscoresBefore = 0;
  }
  for (let i = t.at; i < pos; i++) {
    const c = src.charCodeAt(i);
    if (c === STAR) t.starsBefore++;
    else if (c === UNDERSCORE) t.underscoresBefore++;
  }
  t.at = pos;
  return t;
}

/**
 * `state.scanDelims` (a delimiter run's length and whether it can open or close) for a run between
 * ASCII characters, where markdown-it's Unicode punctuation test (two regular expressions per
 * neighbour) says what `isMdAsciiPunct` says; any other run goes to `scanDelims` itself.
 */
function scanRun(state: StateInline, start: number, canSplitWord: boolean): ReturnType<StateInline['scanDelims']> {
  const src = state.src;
  const max = state.posMax;
  const marker = src.charCodeAt(start);
  const last = start === 0 ? 0x20 : src.charCodeAt(start - 1);
  let pos = start;
  while (pos < max && src.charCodeAt(pos) === marker) pos++;
  const next = pos < max ? src.charCodeAt(pos) : 0x20;
  if (last >= 0x80 || next >= 0x80) return state.scanDelims(start, canSplitWord);
  const lastPunct = isMdAsciiPunct(last);
  const nextPunct = isMdAsciiPunct(next);
  const lastSpace = isWhiteSpace(last);
  const nextSpace = isWhiteSpace(next);
  const left = !nextSpace && (!nextPunct || lastSpace || lastPunct);
  const right = !lastSpace && (!lastPunct || nextSpace || nextPunct);
  return { can_open: left && (canSplitWord || !right || lastPunct), can_close: right && (canSplitWord || !left || nextPunct), length: pos - start };
}

/** A delimiter of {@link emphasisTokenize}: markdown-it's, and where its run starts in the text. */
type RunDelimiter = StateInline['delimiters'][number] & { at: number };

/**
 * markdown-it's emphasis tokenizer (one text token and one delimiter per `*` or `_`), except for
 * characters that cannot pair: they go to the pending text. A run that can only open pairs from its
 * end, one character per closing character after it, so at most as many of its characters as there
 * are of the same character after the run can pair, and the rest (its start) is text; a run that can
 * only close likewise pairs from its start with at most as many characters as come before it; a run
 * that can neither open nor close is text. Delimiters keep the whole run's length, which the "rule
 * of 3" reads.
 */
function emphasisTokenize(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  const marker = state.src.charCodeAt(start);
  if (silent || (marker !== STAR && marker !== UNDERSCORE)) return false;
  const scanned = scanRun(state, start, marker === STAR);
  const length = scanned.length;
  let keep = length;
  if (!scanned.can_open && !scanned.can_close) keep = 0;
  else if (!scanned.can_open || !scanned.can_close) {
    const t = tallyAt(state, start);
    const before = marker === STAR ? t.starsBefore : t.underscoresBefore;
    const after = (marker === STAR ? t.stars : t.underscores) - before - length;
    keep = Math.min(length, scanned.can_open ? after : before);
  }
  const ch = marker === STAR ? '*' : '_';
  // An opener's unpaired characters are its first ones, a closer's its last ones.
  if (scanned.can_open && keep < length) state.pending += ch.repeat(length - keep);
  for (let i = 0; i < keep; i++) {
    const token = state.push('text', '', 0);
    token.content = ch;
    const delimiter: RunDelimiter = { marker, length, token: state.tokens.length - 1, end: -1, open: scanned.can_open, close: scanned.can_close, at: start };
    state.delimiters.push(delimiter);
  }
  if (!scanned.can_open && keep < length) state.pending += ch.repeat(length - keep);
  state.pos += length;
  return true;
}

/**
 * Whether a window may end at `b` (and the next start there): after any character but whitespace
 * (a space is fine when no space, tab or line break follows), half a surrogate pair, `\\`, a
 * backtick, `*`, `_`, `~`, `!`, `[`, `<` and `&`. What the character before `b` takes part in then
 * does not depend on what follows it (as a delimiter run's flanking, an escape, a hard break's
 * trailing spaces, a code span's backtick run or `!` before `[` would), except constructs whose
 * failure leaves literal text that {@link reachesOn} looks for.
 */
function isBoundary(src: string, b: number): boolean {
  const c = src.charCodeAt(b - 1);
  switch (c) {
    case 0x20: {
      const next = src.charCodeAt(b);
      return next !== 0x20 && next !== 0x09 && next !== 0x0a;
    }
    case 0x09: // tab
    case 0x0a: // line break
    case 0x5c: // \
    case 0x60: // `
    case 0x2a: // *
    case 0x5f: // _
    case 0x7e: // ~
    case 0x21: // !
    case 0x5b: // [
    case 0x3c: // <
    case 0x26: // &
      return false;
    default:
      return c < 0xd800 || c > 0xdfff;
  }
}

/** Literal text that a later character could have made into syntax: a link, code span, autolink or entity. */
const REACHES_ON = /[[`<&]/;

/** Bit of a delimiter's character in a set of them. */
const markerBit = (marker: number): number => (marker === STAR ? 1 : marker === UNDERSCORE ? 2 : 4);

type Delimiters = StateInline['delimiters'];

/** The jumps of the top-level delimiters' pairing, per parse state (see {@link processDelimiters}). */
const jumpsOf = new WeakMap<StateInline, number[]>();

/**
 * markdown-it's `balance_pairs` rule (lib/rules_inline/balance_pairs.mjs, 14.3.3), the same code, except
 * that the jumps of the top-level delimiters are kept (see {@link reachableOpeners}).
 */
function balancePairs(state: StateInline): boolean {
  jumpsOf.set(state, processDelimiters(state.delimiters));
  const meta = state.tokens_meta;
  for (let i = 0; i < meta.length; i++) {
    const delimiters = (meta[i] as { delimiters?: Delimiters } | null)?.delimiters;
    if (delimiters) processDelimiters(delimiters);
  }
  return true;
}

/**
 * Pair emphasis-like delimiters as markdown-it does: each closer walks back over earlier delimiters
 * (skipping matched spans by their jumps, and stopping at the lower bound earlier failures of its kind
 * set) to the first opener of its character that the rule of 3 allows. Returns the jumps.
 */
function processDelimiters(delimiters: Delimiters): number[] {
  const openersBottom: Record<number, number[]> = {};
  const max = delimiters.length;
  const jumps: number[] = [];
  if (!max) return jumps;
  let headerIdx = 0;
  let lastTokenIdx = -2;
  for (let closerIdx = 0; closerIdx < max; closerIdx++) {
    const closer = delimiters[closerIdx]!;
    jumps.push(0);
    // markers of one run: adjacent tokens and the same marker
    if (delimiters[headerIdx]!.marker !== closer.marker || lastTokenIdx !== closer.token - 1) headerIdx = closerIdx;
    lastTokenIdx = closer.token;
    closer.length = closer.length || 0;
    if (!closer.close) continue;
    const bottoms = (openersBottom[closer.marker] ??= [-1, -1, -1, -1, -1, -1]);
    const minOpenerIdx = bottoms[(closer.open ? 3 : 0) + (closer.length % 3)]!;
    let openerIdx = headerIdx - jumps[headerIdx]! - 1;
    let newMinOpenerIdx = openerIdx;
    for (; openerIdx > minOpenerIdx; openerIdx -= jumps[openerIdx]! + 1) {
      const opener = delimiters[openerIdx]!;
      if (opener.marker !== closer.marker) continue;
      if (opener.open && opener.end < 0) {
        // The rule of 3 (CommonMark 6.2, rule 9).
        const isOddMatch = (opener.close || closer.open) && (opener.length + closer.length) % 3 === 0 && (opener.length % 3 !== 0 || closer.length % 3 !== 0);
        if (!isOddMatch) {
          const lastJump = openerIdx > 0 && !delimiters[openerIdx - 1]!.open ? jumps[openerIdx - 1]! + 1 : 0;
          jumps[closerIdx] = closerIdx - openerIdx + lastJump;
          jumps[openerIdx] = lastJump;
          closer.open = false;
          opener.end = closerIdx;
          opener.close = false;
          newMinOpenerIdx = -1;
          lastTokenIdx = -2;
          break;
        }
      }
    }
    if (newMinOpenerIdx !== -1) bottoms[(closer.open ? 3 : 0) + (closer.length % 3)] = newMinOpenerIdx;
  }
  return jumps;
}

/**
 * The window's top-level openers left unpaired that a closer after the window could pair with: the
 * ones a closer's walk back over the delimiters reaches from the window's last one (a matched span's
 * closer jumps the walk to before its opener, so what is left unpaired inside a matched span, like the
 * `*` of `**b*a**`, is out of reach). `bits`: their characters (see {@link markerBit}); `first`: where
 * the first of those that are runs of `*` or `_` starts (-1 when none).
 * @remarks A superset of what the whole text's parse reaches: there, closers after the window walk
 * the same jumps, and their lower bounds only cut walks shorter.
 */
function reachableOpeners(state: StateInline): { bits: number; first: number } {
  const delimiters = state.delimiters;
  const jumps = jumpsOf.get(state) ?? [];
  let bits = 0;
  let first = -1;
  for (let i = delimiters.length - 1; i >= 0; i -= (jumps[i] ?? 0) + 1) {
    const d = delimiters[i]!;
    if (!d.open || d.end !== -1) continue;
    bits |= markerBit(d.marker);
    const at = (d as Partial<RunDelimiter>).at;
    if (at !== undefined && (first < 0 || at < first)) first = at;
  }
  return { bits, first };
}

/** The last window end (see {@link isBoundary}) after `a` and at or before `at` (`a` when none). */
function boundaryBefore(src: string, a: number, at: number): number {
  let b = at;
  while (b > a && !isBoundary(src, b)) b--;
  return b;
}

/**
 * Characters of the window's top-level delimiters that could close but closed nothing in it (even if
 * they then opened something): in the whole text they would have looked further back, into earlier
 * windows. `couldClose` is each delimiter's flag before pairing (pairing clears it on openers).
 */
function unpairedClosers(state: StateInline, couldClose: readonly boolean[]): number {
  const delimiters = state.delimiters;
  const closed = new Uint8Array(delimiters.length);
  for (const d of delimiters) if (d.end >= 0) closed[d.end] = 1;
  let bits = 0;
  for (let i = 0; i < delimiters.length; i++) if (couldClose[i] && closed[i] === 0) bits |= markerBit(delimiters[i]!.marker);
  return bits;
}

/**
 * Literal text in the window that a later character could have made into syntax: a `[` a later
 * `](…)` makes a link, a backtick run a later one closes, a `<` a later `>` makes an autolink, a `&`
 * a later `;` makes an entity.
 */
function reachesOn(state: StateInline, a: number, b: number): boolean {
  if (!REACHES_ON.test(state.src.slice(a, b))) return false;
  for (const t of state.tokens) if (t.type === 'text' && REACHES_ON.test(t.content)) return true;
  return false;
}

/** Default window size (characters); text up to twice as long is parsed in one piece. */
export const WINDOW = 4096;

/** Window ends tried at one start (the first boundary, then the next) before giving up on a clean split there. */
const TRIES = 2;

/** How far past the first boundary a window end after `)`, `>`, `;` or a space is looked for. */
const LOOK_FURTHER = 32;

/**
 * Whether `src[a, b)` has an even number of runs of each of `*`, `_`, `~` and the backtick. Where
 * emphasis pairs run by run (`*a*a*a…`, `**a**a…`) or code spans follow each other (`` `a`a`a… ``),
 * an odd count leaves an opener unpaired or a code span open at the window's end, so the first window
 * end tried is moved on (a few boundaries at most) until the counts are even.
 */
function evenRuns(src: string, a: number, b: number): boolean {
  let odd = 0;
  let prev = 0;
  for (let i = a; i < b; i++) {
    const c = src.charCodeAt(i);
    if (c !== prev) {
      if (c === STAR) odd ^= 1;
      else if (c === UNDERSCORE) odd ^= 2;
      else if (c === 0x7e) odd ^= 4;
      else if (c === 0x60) odd ^= 8;
    }
    prev = c;
  }
  return odd === 0;
}

/**
 * The end of a window: the first boundary at or after `from`, or a boundary shortly after it that
 * follows `)`, `>`, `;` or a space (where a link, autolink, entity or word ends), or the end of the
 * text when that is near.
 */
function windowEnd(src: string, from: number, window: number): number {
  let b = from;
  while (b < src.length && !isBoundary(src, b)) b++;
  const last = Math.min(src.length, b + LOOK_FURTHER);
  for (let c = b; c < last; c++) {
    const ch = src.charCodeAt(c - 1);
    if ((ch === 0x29 || ch === 0x3e || ch === 0x3b || ch === 0x20) && isBoundary(src, c)) {
      b = c;
      break;
    }
  }
  return src.length - b < window ? src.length : b;
}

/**
 * Tokenize a paragraph's inline source as markdown-it's inline rule would (without joining text
 * tokens) and hand the tokens in source order, window by window, to the visitor `start` makes.
 * @remarks A window ends at the first boundary (see {@link isBoundary}) `window` characters into
 * it (the first one an eighth of that, each next one twice its predecessor up to `window`), and the
 * next one starts there; every window's parse sees the text before it (for the flanking
 * of a delimiter run at its start) and nothing after its end. So the windows read the text as one
 * parse does unless something pairs across a window end:
 * - literal text that later text could complete ({@link reachesOn}): the window is parsed again up
 *   to the next boundary, {@link TRIES} ends in all, and then the rest of the text in one piece;
 * - emphasis or strikethrough openers left unpaired: the window is parsed again up to the next
 *   boundary (`*a*a*a…` splits evenly at every other one, and the first end tried is one with an
 *   even number of delimiter and backtick runs before it, see {@link evenRuns}), {@link TRIES} ends
 *   in all, and then kept;
 *   if a later window then has a closer of the same character that found no opener in its own
 *   window, the whole text is parsed again in one piece (`start` is called for a new visitor).
 */
export function inlineTokens(src: string, start: () => (tokens: Token[]) => void, window = WINDOW): void {
  const parser = canLink(src) ? inlineParser : inlineParserNoLinks;
  const inline = parser.inline;
  const after = inline.ruler2.getRules('');
  const env = {};
  // One tally of the whole text for all its windows.
  let tally: Tally | undefined;
  let visit = start();
  // Characters of openers left unpaired in the windows visited so far.
  let open = 0;
  // The first windows are shorter: on text that does not split cleanly, less is parsed in vain.
  let size = Math.max(1, window >> 3);
  let a = 0;
  while (a < src.length) {
    let b = src.length - a >= 2 * window ? windowEnd(src, a + size, window) : src.length;
    for (let step = 0; step < 4 && b < src.length && !evenRuns(src, a, b); step++) b = windowEnd(src, b + 1, window);
    let backed = false;
    for (let tries = 1; ; tries++) {
      const tokens: Token[] = [];
      const state = new inline.State(b === src.length ? src : src.slice(0, b), parser, env, tokens);
      state.pos = a;
      if (b !== src.length || a > 0) tallies.set(state, (tally ??= newTally(src)));
      inline.tokenize(state);
      const couldClose = open === 0 ? [] : state.delimiters.map((d) => d.close);
      for (const rule of after) rule(state);
      if (open !== 0 && open & unpairedClosers(state, couldClose)) {
        visit = start();
        open = 0;
        a = 0;
        b = src.length;
        continue;
      }
      if (b < src.length && reachesOn(state, a, b)) {
        b = tries < TRIES ? windowEnd(src, b + 1, window) : src.length;
        continue;
      }
      const reach = b < src.length ? reachableOpeners(state) : null;
      const left = reach === null ? 0 : reach.bits;
      if (left !== 0 && tries < TRIES) {
        // End before the first opener left in reach (unless that leaves too short a window), else try the next end.
        const back = backed || reach!.first < 0 ? a : boundaryBefore(src, a, reach!.first);
        backed = true;
        b = back > a && back - a >= size >> 1 ? back : windowEnd(src, b + 1, window);
        continue;
      }
      visit(tokens);
      open |= left;
      size = Math.min(window, 2 * size);
      break;
    }
    a = b;
  }
  // Let go of the last window's state (and its tokens).
  lastState = lastTally = null;
}
