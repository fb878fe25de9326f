/**
 * The browser app in real Chromium (Debian's `chromium`, driven by playwright-core, no download):
 * sign in, create a token and use it, watch a document change live, accept a review and publish it,
 * open the public page, revoke the token. axe-core checks every page (no serious or critical
 * violation); screenshots at desktop and phone widths go to test-artifacts/ (git-ignored).
 * Without Chromium the tests are skipped with the reason printed.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { memoryStorage } from '../../adapters/memory/index.ts';
import { listen } from '../../transports/http/listener.ts';
import { createApiHandler } from '../../src/api/handler.ts';
import { chromiumAvailable, launchChromium } from '../../scripts/chromium-kit.ts';
import { researcherWithWaitingReview } from './review-kit.ts';
import { addParagraph, createDocument, signInLink, startWebServer, type Running } from './web-kit.ts';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/browser');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

let browser: Browser | null = null;
let server: Running | null = null;

/** axe-core in the page: the serious and critical violations, as "rule: target" lines. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, options: unknown) => Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
}

/**
 * At phone width: the page does not scroll sideways, every action (link, button, field) lies inside the
 * viewport (none clipped into a table's scroll area), and no text of more than 8 characters is squeezed
 * into a column narrower than 3 characters (a prefix or path broken one character per line).
 */
async function phoneProblems(page: Page): Promise<string[]> {
  // A string, not a function: tsx's keepNames would wrap the helpers in a __name the page lacks.
  return page.evaluate(`(() => {
    const problems = [];
    const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    if (overflow > 1) problems.push('the page scrolls sideways by ' + overflow + 'px');
    const width = document.documentElement.clientWidth;
    const describe = (el) => el.tagName.toLowerCase() + ' "' + (el.textContent || el.name || el.getAttribute('aria-label') || '').trim().slice(0, 40) + '"';
    for (const el of document.querySelectorAll('main a[href], main button, main input:not([type=hidden]), main select, header a[href], header button')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < -1 || r.right > width + 1) problems.push(describe(el) + ' lies outside the viewport (' + Math.round(r.left) + '-' + Math.round(r.right) + ' of ' + width + ')');
    }
    const em = parseFloat(getComputedStyle(document.body).fontSize);
    for (const el of document.querySelectorAll('main code, main td, main th, main h1')) {
      const text = (el.textContent || '').trim();
      if (text.length <= 8) continue;
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.width < 3 * em * 0.6 && r.height > 3 * em) problems.push(describe(el) + ' is squeezed to ' + Math.round(r.width) + 'px wide');
    }
    return problems;
  })()`);
}

/** Check a page with axe at desktop and phone widths, its phone layout, and screenshot it at both. */
async function audit(page: Page, name: string): Promise<void> {
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    assert.equal(await axeViolations(page), [], `${name} (${label}): no serious or critical axe violation`);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
    if (label === 'phone') assert.equal(await phoneProblems(page), [], `${name}: every action reachable at 390 px without sideways scrolling`);
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

async function newPage(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}

const available = chromiumAvailable('transports/web/browser.test.ts');
const it = available ? test : test.skip;

test.before(async () => {
  if (!available) return;
  browser = await launchChromium(ARTIFACTS);
  server = await startWebServer({ listen, storage: memoryStorage(), createApiHandler });
});

test.after(async () => {
  await browser?.close();
  await server?.close();
});

it('the person signs in, creates a token an agent uses, watches a document change live, reviews and publishes, revokes the token', async () => {
  const s = server!;
  const context = await browser!.newContext({ viewport: VIEWPORTS.desktop });
  const problems: string[] = [];
  try {
    const page = await newPage(context, problems);

    // Signed out: 401 with a way to sign in.
    const signedOut = await page.goto(`${s.url}/settings/api`);
    assert.is(signedOut?.status(), 401);
    await audit(page, 'signed-out');

    // Sign in with a one-time link.
    const { data } = (await (await signInLink(s)).json()) as { data: { url: string } };
    await page.goto(data.url);
    assert.is(new URL(page.url()).pathname, '/');
    assert.is(await page.getByRole('heading', { level: 1 }).textContent(), 'Console');
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible());

    // Create a token and use it from a client.
    await page.getByRole('link', { name: 'Agent access' }).click();
    await page.getByLabel('Label').fill('Browser-made agent');
    await page.getByLabel('Request budget').fill('500');
    await page.getByLabel('Expires in days').fill('30');
    for (const scope of ['document:create', 'document:write']) await page.getByLabel(scope, { exact: true }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('New token').inputValue();
    assert.match(token, /^svc_agent_v1_scred_[a-f0-9]{24}_/);
    assert.ok(await page.getByLabel('New token').evaluate((el) => (el as HTMLInputElement).readOnly));
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await audit(page, 'settings-new-token');
    const auth = await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(auth.status, 200);

    // Watch a document change live while the client mutates it.
    const { documentRef, revision } = await createDocument(s, token);
    const rev2 = await addParagraph(s, token, documentRef, revision, 'Written before the page opened', 'browser-mutation-000001');
    await page.goto(`${s.url}/documents/${documentRef}`);
    await page.getByText('Following changes live.').waitFor();
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    await addParagraph(s, token, documentRef, rev2, 'Written **while** the page is open', 'browser-mutation-000002');
    await page.locator('#doc-body').getByText('while').waitFor();
    assert.is(await page.locator('#doc-version').textContent(), '3');
    assert.is(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, 'no reload');
    assert.match((await page.locator('#doc-markdown').textContent()) ?? '', /Written \*\*while\*\* the page is open/);
    await audit(page, 'document');

    // A review waits for the person; accept it in the page, then publish.
    const { actor, jobId, reviewRef } = await researcherWithWaitingReview(s.engine, 'demo', 'browser-job-start-0001');
    const other = await researcherWithWaitingReview(s.engine, 'demo', 'browser-job-start-0002');
    await page.goto(`${s.url}/`);
    await page.getByText('Following changes live.').waitFor();
    await s.engine.operator.decide(other.reviewRef, { decision: 'reject', person: 'demo' });
    await page.locator(`[data-job="${other.jobId}"] .state`).getByText('failed').waitFor();
    await audit(page, 'console');
    await page.locator(`main a[href="/reviews/${reviewRef}"]`).first().click();
    assert.ok(await page.getByRole('heading', { name: 'Citations' }).isVisible());
    await audit(page, 'review');
    await page.getByRole('button', { name: 'Accept' }).click();
    await page.getByRole('button', { name: 'Confirm rights' }).click();
    await page.getByRole('button', { name: 'Release' }).click();
    await page.getByRole('button', { name: 'Promote' }).click();
    await page.getByRole('heading', { name: 'Public pages' }).waitFor();
    await audit(page, 'review-published');
    const job = await s.engine.jobs.read(actor, jobId);
    assert.is(job.job.state, 'succeeded');

    // Open the public page.
    await page.locator('a[href^="/k/entity/"]').click();
    assert.match(new URL(page.url()).pathname, /^\/k\/entity\//);
    assert.is(await page.getByRole('heading', { level: 1 }).textContent(), 'Yjs');
    await audit(page, 'public-entity');

    // The request inspector shows the agent's requests.
    await page.goto(`${s.url}/requests`);
    assert.ok(await page.getByText('GET /api/v1/auth').first().isVisible());
    await audit(page, 'requests');

    // Revoke the token: the client is refused from then on.
    await page.goto(`${s.url}/settings/api`);
    await page.getByRole('button', { name: 'Revoke Browser-made agent' }).click();
    await page.getByRole('cell', { name: 'Revoked' }).waitFor();
    await audit(page, 'settings');
    const refused = await fetch(`${s.url}/api/v1/auth`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(refused.status, 401);
    assert.is(((await refused.json()) as { error: { code: string } }).error.code, 'AUTH_REQUIRED');

    // Sign out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.is((await page.goto(`${s.url}/`))?.status(), 401);
    assert.equal(problems, [], 'no script error and no CSP violation in the console');
  } finally {
    await context.close();
  }
});

test.run();
