/**
 * `npm run bench -- bundle`: the size of the typed client as a browser app ships it (see
 * scripts/client-bundle.ts), against its budget.
 */
import { CLIENT_BUNDLE_GZIP_BUDGET, measureClientBundle } from '../scripts/client-bundle.ts';
import { recordTable } from './report.ts';

/** Measure the client bundle and print its row. */
export async function runBundleBench(): Promise<void> {
  const b = await measureClientBundle(process.cwd());
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`\nclient bundle (src/client/index.ts, esbuild minified, browser): ${kb(b.minifiedBytes)} minified, ${kb(b.gzipBytes)} gzip (budget ${kb(CLIENT_BUNDLE_GZIP_BUDGET)}); server modules inside: ${b.forbidden.length ? b.forbidden.join(', ') : 'none'}`);
  recordTable(
    'Client bundle: src/client/index.ts, esbuild minified, browser (budget: gzip)',
    [
      ['bundle', 'minified', 'gzip', 'budget', 'server modules'],
      ['src/client', kb(b.minifiedBytes), kb(b.gzipBytes), kb(CLIENT_BUNDLE_GZIP_BUDGET), b.forbidden.length ? b.forbidden.join(', ') : 'none'],
    ],
    1,
    20,
  );
}
