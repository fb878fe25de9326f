/**
 * What the composition root hands every domain service.
 * @module
 */
import type { Clock } from './clock.ts';
import type { Sha256Hex } from './hash.ts';
import type { IdSource, RefMinter } from './ids.ts';
import type { Storage } from './ports.ts';
import type { Links } from './contract/links.ts';

/** Shared dependencies of the domain services. */
export interface EngineDeps {
  storage: Storage;
  clock: Clock;
  ids: IdSource;
  refs: RefMinter;
  sha256: Sha256Hex;
  /**
   * The links answers carry (`browserHref`, `canonicalUrl`, report links), under the engine's base URL
   * (e.g. `http://127.0.0.1:8787`; '' gives relative links): a domain names what it links to, never a path.
   */
  links: Links;
  /**
   * Where failed background work goes (compactions, budget saves, later captures and jobs): it has no
   * request to answer, so it is reported here instead of being swallowed.
   */
  reportError: ErrorReporter;
}

/** Receives an error of background work and names the work (`compaction`, `budgets`, …). Must not throw. */
export type ErrorReporter = (error: unknown, source: string) => void;

/** The default {@link ErrorReporter}: one JSON line on stderr. */
export const logErrorToConsole: ErrorReporter = (error, source) => {
  const e = error instanceof Error ? error : new Error(String(error));
  console.error(JSON.stringify({ level: 'error', msg: 'background work failed', source, error: e.message, stack: e.stack }));
};
