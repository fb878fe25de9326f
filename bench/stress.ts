/**
 * Stress cases of the document engine: the version-only mutation loop across document sizes, and
 * edits to 41,000-character paragraphs built to stress the inline Markdown parser.
 */
import { memoryStorage } from '../adapters/memory/index.ts';
import { createEngine } from '../src/engine.ts';
import { SECONDS, actor, buildDocument, editText, fmt, key, rate, table } from './mutations.ts';

/**
 * The version-only loop: `mutate` calls whose caller reads only `receipt.resultingVersion` and
 * `document.revision`, on 10, 1,000 and 10,000 blocks. Sizes take turns in short rounds (so that
 * load from elsewhere on the machine hits them alike) and each keeps its best round.
 */
export async function versionOnlyScaling(): Promise<void> {
  const sizes = [10, 1000, 10_000];
  const engines = sizes.map(() => createEngine({ storage: memoryStorage() }));
  const loops = await Promise.all(
    sizes.map(async (size, i) => {
      const engine = engines[i]!;
      const state = await buildDocument(engine, size);
      let seq = 0;
      let version = 0;
      return async () => {
        seq++;
        const blockId = state.ids[seq % state.ids.length];
        const mutation = { kind: 'edit', blockId, block: { type: 'paragraph', markdown: editText(size, seq) } };
        const out = await engine.documents.mutate(actor, state.ref, { idempotencyKey: key(), ifRevision: state.revision, body: { v: 1, intent: 'edit', mutation } });
        version = out.receipt.resultingVersion;
        state.revision = out.document.revision;
        return version;
      };
    }),
  );
  const best = sizes.map(() => 0);
  const rounds = 5;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sizes.length; i++) best[i] = Math.max(best[i]!, await rate(loops[i]!, undefined, undefined, SECONDS / rounds));
  }
  for (const engine of engines) await engine.close();
  console.log('\nversion-only mutate loop (reads receipt.resultingVersion and document.revision only), best of 5 interleaved rounds');
  table([
    ['blocks', 'edits/s', 'vs 10 blocks'],
    ...sizes.map((size, i) => [size.toLocaleString('en-US'), fmt(best[i]!), `${((best[i]! / best[0]!) * 100).toFixed(1)}%${i ? ` (target ≥ 50%: ${best[i]! >= best[0]! / 2 ? 'met' : 'NOT met'})` : ''}`]),
  ], 'Version-only mutate loop: rate vs the 10-block rate (%)', 2, 50);
}

/** 41,000-character paragraphs built to stress an inline Markdown parser: each unit repeated. */
export const PATHOLOGICAL: Record<string, string> = Object.fromEntries(
  [
    // emphasis that pairs, and delimiter runs that cannot
    '**a**a',
    '*a',
    '_a',
    '***a',
    'a*b',
    '_a_ ',
    '*a**',
    'a**b*',
    '~~a',
    '*',
    '_',
    // brackets, links and images
    '[',
    '[a',
    '](',
    '[a](',
    '[[a]]',
    '[a](b)',
    '![',
    '![a](',
    // code spans, autolinks, escapes, entities
    '`a',
    '`',
    '<',
    '<a',
    '<http://a>',
    '\\*',
    '&amp;',
    '*_[`<](a',
  ].map((unit) => [unit, unit.repeat(Math.ceil(41_000 / unit.length)).slice(0, 41_000)]),
);

/** Unmeasured edits of each paragraph before the measured ones (the parser's code is hot in a running server). */
const WARM_EDITS = 4;

/**
 * Variants of one paragraph whose last characters are replaced by `from` to `to - 1` copies of
 * `fill` (0 copies: the paragraph itself); the bench measures "x" and "z" variants after "y" ones, all
 * different so that no cache helps.
 */
const variants = (text: string, fill: string, from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, k) => text.slice(0, -4) + fill.repeat(from + k) + text.slice(text.length - 4 + from + k));

/**
 * Time per edit that sets one block of a 10-block document to each pathological paragraph (target
 * ≤ 10 ms): the median of 9 edits (the paragraph and 8 variants) after {@link WARM_EDITS} warm-up
 * edits, and the first edit of the case for reference (it pays for compiling code the case is the
 * first to need). A paragraph that is not one block of inline content (a line of `*` is a thematic
 * break) is timed as a rejected edit.
 */
export async function pathologicalEdits(): Promise<void> {
  const engine = createEngine({ storage: memoryStorage() });
  const state = await buildDocument(engine, 10);
  const rows = [['paragraph (41,000 chars of …)', 'ms per edit', 'first edit', 'outcome']];
  for (const [name, text] of Object.entries(PATHOLOGICAL)) {
    let outcome = 'applied';
    const edit = async (markdown: string): Promise<number> => {
      const t = performance.now();
      try {
        const out = await engine.documents.mutate(actor, state.ref, {
          idempotencyKey: key(),
          ifRevision: state.revision,
          body: { v: 1, intent: 'stress', mutation: { kind: 'edit', blockId: state.ids[0], block: { type: 'paragraph', markdown } } },
        });
        state.revision = out.document.revision;
      } catch (error) {
        outcome = `rejected (${(error as { code?: string }).code ?? 'error'})`;
      }
      return performance.now() - t;
    };
    const warm = variants(text, 'y', 1, 1 + WARM_EDITS);
    const first = await edit(warm[0]!);
    for (const markdown of warm.slice(1)) await edit(markdown);
    outcome = 'applied';
    const times: number[] = [];
    for (const markdown of [...variants(text, 'x', 0, 5), ...variants(text, 'z', 1, 5)]) times.push(await edit(markdown));
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1]!;
    rows.push([JSON.stringify(name), `${median.toFixed(2)}${median <= 10 ? '' : ' (NOT met)'}`, first.toFixed(1), outcome]);
  }
  await engine.close();
  console.log(`\npathological inline Markdown, one edit of a 10-block document, median of 9 after ${WARM_EDITS} warm-up edits (target ≤ 10 ms)`);
  table(rows, 'Pathological 41,000-character paragraphs: ms per edit', 1, 10, true);
}
