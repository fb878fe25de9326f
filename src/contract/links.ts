/**
 * Every link an answer carries, rendered in one place from the contract's own paths: a domain names
 * what it links to (a documentRef, a reviewRef, a released artifact, a job's report) and this module
 * turns the reference into the URL, so the path of a page or an operation is spelled once
 * ({@link LINKED_PATHS}, which the operations use) and nowhere else.
 * @module
 */
import type { AnyOperation } from './define.ts';

/**
 * The paths of what answers link to: the person's document and review pages, a released artifact's
 * public page, a research job's report. Their operations (./meta.ts, ./research.ts) take their `path`
 * from here, so a domain that renders a link through this module imports no operation (and no
 * schema of another domain with it).
 */
export const LINKED_PATHS = {
  documentPage: '/documents/{documentRef}',
  reviewPage: '/reviews/{reviewRef}',
  publicPage: '/k/{kind}/{artifactId}/{revision}',
  report: '/api/v1/research-jobs/{jobId}/report',
  /** The browser app's page that spends a sign-in link (the secret is its last segment). */
  signIn: '/sign-in/{secret}',
} as const;

/** A linked path as an operation-shaped template for {@link operationPath}. */
const linked = (name: keyof typeof LINKED_PATHS) => ({ operationId: name, path: LINKED_PATHS[name] });

/** An operation's path with its `{name}` parameters filled in (each percent-encoded). */
export function operationPath(op: Pick<AnyOperation, 'operationId' | 'path'>, params: Readonly<Record<string, string | undefined>>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${op.operationId}: path parameter ${name} is missing`);
    return encodeURIComponent(value);
  });
}

/** What a released artifact's public page is found by. */
export interface ArtifactLocator {
  kind: string;
  artifactId: string;
  revision: string;
}

/** The public page's path of a released artifact (`/k/{kind}/{artifactId}/{revision}`), without an origin. */
export function locatorPath(ref: ArtifactLocator): string {
  return operationPath(linked('publicPage'), { kind: ref.kind, artifactId: ref.artifactId, revision: ref.revision });
}

/** The links of one server: each reference as an absolute URL under its base URL ('' gives relative links). */
export interface Links {
  /** The origin (and mount path) every link starts with. */
  readonly baseUrl: string;
  /** The person's page of a document (`browserHref`). */
  documentPage(documentRef: string): string;
  /** The person's page of a review (`browserHref` of a proposal and a review). */
  reviewPage(reviewRef: string): string;
  /** The public page of a released artifact (`canonicalUrl`). */
  publicPage(ref: ArtifactLocator): string;
  /** A research job's report in one format (`jsonHref`, `markdownHref`). */
  report(jobId: string, format: 'rich-json' | 'markdown'): string;
  /** The browser app's page that signs in once with a sign-in link's secret. */
  signIn(secret: string): string;
}

/** The {@link Links} of a server reached at `baseUrl` (a trailing slash is dropped). */
export function linksAt(baseUrl: string): Links {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    baseUrl: base,
    documentPage: (documentRef) => `${base}${operationPath(linked('documentPage'), { documentRef })}`,
    reviewPage: (reviewRef) => `${base}${operationPath(linked('reviewPage'), { reviewRef })}`,
    publicPage: (ref) => `${base}${locatorPath(ref)}`,
    report: (jobId, format) => `${base}${operationPath(linked('report'), { jobId })}?format=${format}`,
    signIn: (secret) => `${base}${operationPath(linked('signIn'), { secret })}`,
  };
}
