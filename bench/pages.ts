/**
 * `npm run bench -- pages`: the browser app's budgets. For each page: its HTML size (raw and gzip,
 * budget 50 KB), the scripts it loads (gzip, budget 100 KB), the server's answer time over HTTP
 * (p50/p99 of 200 requests) and, when Chromium is installed, the first contentful paint in a real
 * browser (budget 200 ms). The data: a 200-block document, 20 tokens with 50 requests each, a review
 * waiting with its report, the console listing them.
 */
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { memoryStorage } from '../adapters/memory/index.ts';
import { listen } from '../transports/http/listener.ts';
import { createApiHandler } from '../src/api/handler.ts';
import { SCOPES } from '../src/auth/scopes.ts';
import { APP_CSS, APP_JS } from '../transports/web/assets.ts';
import { researcherWithWaitingReview } from '../transports/web/review-kit.ts';
import { addParagraph, createDocument, signIn, startWebServer } from '../transports/web/web-kit.ts';
import { table } from './mutations.ts';

const CHROMIUM = process.env.KW_CHROMIUM ?? '/usr/bin/chromium';
const HTML_BUDGET = 50 * 1024;
const SCRIPT_BUDGET = 100 * 1024;
const PAINT_BUDGET_MS = 200;
const REQUESTS = 200;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Run the pages benchmark and print its table. */
export async function runPagesBench(): Promise<void> {
  const s = await startWebServer({ listen, storage: memoryStorage(), createApiHandler });
  try {
    const { cookie } = await signIn(s);
    const writer = await s.engine.credentials.create({ accountId: 'demo', label: 'Bench writer', scopes: SCOPES });
    const { documentRef, revision } = await createDocument(s, writer.token);
    let rev = revision;
    for (let i = 0; i < 200; i++) rev = await addParagraph(s, writer.token, documentRef, rev, `Paragraph ${i} with **bold** text and [a source](https://example.org/${i}).`, `bench-pages-mutation-${String(i).padStart(6, '0')}`);
    for (let t = 0; t < 19; t++) {
      const { token } = await s.engine.credentials.create({ accountId: 'demo', label: `Agent ${t}`, scopes: ['document:read'] });
      for (let r = 0; r < 50; r++) await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
    }
    const { reviewRef } = await researcherWithWaitingReview(s.engine, 'demo', 'bench-pages-job-000001');
    const pages: [string, string, boolean][] = [
      ['signed out (401)', '/', false],
      ['console /', '/', true],
      ['agent access /settings/api', '/settings/api', true],
      ['document (200 blocks)', `/documents/${documentRef}`, true],
      ['review', `/reviews/${reviewRef}`, true],
      ['requests (1000 held)', '/requests', true],
    ];
    const scriptsGzip = gzipSync(APP_JS).byteLength;
    const cssGzip = gzipSync(APP_CSS).byteLength;

    let paint: ((path: string, signedIn: boolean) => Promise<number>) | null = null;
    let closeBrowser = async () => undefined as void;
    if (existsSync(CHROMIUM)) {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
      const context = await browser.newContext();
      await context.addCookies([{ name: 'kw_session', value: cookie.split('=')[1]!, url: s.url }]);
      const anonymous = await browser.newContext();
      closeBrowser = () => browser.close();
      paint = async (path, signedIn) => {
        const page = await (signedIn ? context : anonymous).newPage();
        await page.goto(`${s.url}${path}`, { waitUntil: 'load' });
        const fcp = await page.evaluate(
          () =>
            new Promise<number>((resolve) => {
              const seen = performance.getEntriesByName('first-contentful-paint')[0];
              if (seen) return resolve(seen.startTime);
              new PerformanceObserver((list) => resolve(list.getEntries()[0]!.startTime)).observe({ type: 'paint', buffered: true });
            }),
        );
        await page.close();
        return fcp;
      };
    } else {
      console.log(`pages: no Chromium at ${CHROMIUM}: first contentful paint not measured`);
    }

    const rows: string[][] = [['page', 'HTML', 'HTML gzip', 'scripts gzip', 'server p50', 'server p99', 'first paint', 'budgets']];
    for (const [name, path, signedIn] of pages) {
      const headers = signedIn ? { cookie } : {};
      const html = await (await fetch(`${s.url}${path}`, { headers })).text();
      const times: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        await (await fetch(`${s.url}${path}`, { headers })).arrayBuffer();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const bytes = Buffer.byteLength(html);
      const loadsScript = html.includes('/assets/app.js');
      const scripts = loadsScript ? scriptsGzip : 0;
      let fcp: number | null = null;
      if (paint) {
        await paint(path, signedIn); // warm
        const samples = [await paint(path, signedIn), await paint(path, signedIn), await paint(path, signedIn)].sort((a, b) => a - b);
        fcp = samples[1]!;
      }
      const ok = bytes <= HTML_BUDGET && scripts <= SCRIPT_BUDGET && (fcp === null || fcp < PAINT_BUDGET_MS);
      rows.push([
        name,
        `${(bytes / 1024).toFixed(1)} KB`,
        `${(gzipSync(html).byteLength / 1024).toFixed(1)} KB`,
        `${(scripts / 1024).toFixed(2)} KB`,
        `${percentile(times, 0.5).toFixed(2)} ms`,
        `${percentile(times, 0.99).toFixed(2)} ms`,
        fcp === null ? 'n/a' : `${fcp.toFixed(0)} ms`,
        ok ? 'within' : 'OVER',
      ]);
    }
    await closeBrowser();
    const title = `Browser app pages (budgets: HTML ≤ 50 KB, scripts ≤ 100 KB gzip, first paint < 200 ms; stylesheet ${(cssGzip / 1024).toFixed(2)} KB gzip)`;
    console.log(`\n${title}`);
    table(rows, title, 6, PAINT_BUDGET_MS, true);
  } finally {
    await s.close();
  }
}
