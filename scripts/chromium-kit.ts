/**
 * Real Chromium for the browser tests: Debian's `chromium` (or `KW_CHROMIUM`) driven by
 * playwright-core, no download. Without it the tests are skipped with the reason printed.
 * @module
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** The Chromium executable. */
export const CHROMIUM = process.env.KW_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Whether Chromium is installed; when not, prints why `testFile` is skipped. */
export function chromiumAvailable(testFile: string): boolean {
  const available = existsSync(CHROMIUM);
  if (!available) console.log(`${testFile}: skipped, no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KW_CHROMIUM)`);
  return available;
}

/** Launch headless Chromium, with the screenshot folder made. */
export async function launchChromium(artifacts: string): Promise<Browser> {
  mkdirSync(artifacts, { recursive: true });
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}
