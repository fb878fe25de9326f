/**
 * The public locators `/k/edition/<id>/<digest>`, `/k/entity/<id>/<graph-revision>` and
 * `/k/inquiry/<id>/<graph-revision>`: a readable HTML page of a released projection, or Markdown
 * when the path ends in `.md` or Accept asks for text/markdown. Anonymous, never charged, cached as
 * immutable content; anything unreleased is 404. Also the person's review page (`browserHref`),
 * which needs sign-in.
 * @module
 */
import { notFound } from '../../errors.ts';
import { Patterns } from '../../ids.ts';
import { notReleasedPage, renderPublicHtml, renderPublicMarkdown, reviewSignInPage } from '../pages.ts';
import { baseHeaders } from '../envelope.ts';
import { etagMatches, weakEtag } from '../http-util.ts';
import { bind } from '../bind.ts';
import { contract } from '../../contract/operations.ts';
import type { RequestContext } from '../context.ts';
import type { PlainResponse } from '../types.ts';
import { checkLocator, IMMUTABLE_CACHE } from './knowledge.ts';

const HTML_TYPE = 'text/html; charset=utf-8';
const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

function page(ctx: RequestContext, status: number, markdown: boolean, body: string, extra: Record<string, string>): PlainResponse {
  const headers = baseHeaders(ctx, markdown ? MARKDOWN_TYPE : HTML_TYPE);
  headers['x-content-type-options'] = 'nosniff';
  headers.vary = 'Accept';
  if (!markdown) headers['content-security-policy'] = CSP;
  Object.assign(headers, extra);
  return { status, headers, body };
}

/** True when the Accept header prefers Markdown (text/markdown listed, and not below text/html). */
export function wantsMarkdown(accept: string | undefined): boolean {
  if (!accept) return false;
  let md = -1;
  let html = -1;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2)) || 0;
    if (type === 'text/markdown') md = Math.max(md, weight);
    if (type === 'text/html') html = Math.max(html, weight);
  }
  return md > 0 && md >= html;
}

/** GET /k/{kind}/{artifactId}/{revision}[.md]: the public page of a released projection. */
const publicPage = bind(contract.getPublicPage, async (ctx, input) => {
  const { kind, artifactId } = input.path;
  const suffixed = input.path.revision.endsWith('.md');
  const revision = suffixed ? input.path.revision.slice(0, -3) : input.path.revision;
  const markdown = suffixed || wantsMarkdown(input.headers.accept);
  let valid: boolean;
  try {
    valid = checkLocator(kind, artifactId, revision);
  } catch {
    valid = false; // a malformed locator names nothing that could be released
  }
  const read = valid ? await ctx.engine.knowledge.readPublicArtifact(kind, artifactId, revision) : null;
  if (!read) return page(ctx, 404, markdown, notReleasedPage(markdown), { 'cache-control': 'no-store' });
  const etag = weakEtag(revision, `${kind}-${markdown ? 'md' : 'html'}`);
  const headers = { etag, 'cache-control': IMMUTABLE_CACHE };
  if (input.headers.ifNoneMatch !== undefined && etagMatches(input.headers.ifNoneMatch, etag)) {
    return { status: 304, headers: { ...baseHeaders(ctx, null), ...headers, vary: 'Accept' } };
  }
  const pageInput = { kind: read.ref.kind, value: JSON.parse(read.release.projectionJson) as Record<string, unknown>, canonicalUrl: read.canonicalUrl, revision };
  return page(ctx, 200, markdown, markdown ? renderPublicMarkdown(pageInput) : renderPublicHtml(pageInput), headers);
});

/**
 * GET /reviews/{reviewRef}: the review page `browserHref` points at. It is for the signed-in person;
 * this server has no sign-in, so it answers 401 with a short HTML note (like the document pages).
 */
const reviewPage = bind(contract.getReviewPage, (ctx, input) => {
  if (!Patterns.reviewRef.test(input.path.reviewRef)) throw notFound('The review');
  const body = reviewSignInPage(input.path.reviewRef);
  return page(ctx, 401, false, body, { 'cache-control': 'no-store' });
});

/** The bindings of the public page operations (not in /openapi.json: they are pages, not API operations). */
export const publicPageBindings = [publicPage, reviewPage];
