/**
 * Answers for a document representation (a document read or a report export): the revision headers,
 * the weak ETag and its 304, and the body of each format.
 * @module
 */
import type { DocumentRead } from '../documents/types.ts';
import { documentDataBody } from './document-json.ts';
import type { RequestContext } from './context.ts';
import { baseHeaders, ok } from './envelope.ts';
import { ServiceError } from '../errors.ts';
import { etagMatches, exceedsBytes, weakEtag } from './http-util.ts';
import { MAX_RESPONSE_BODY, type PlainResponse } from './types.ts';

/**
 * A blocks or markdown answer over the 2 MB response limit. The document's rich-json always fits (a
 * document is kept within the limit in that format), while blocks repeat code and table cells as
 * Markdown: the way out is to read rich-json, not to refresh and try again.
 */
function tooLargeFor(format: 'blocks' | 'markdown'): ServiceError {
  return new ServiceError(
    'CONFLICT',
    `The ${format} representation of this document exceeds the 2 MB response limit (nothing was truncated); read the document with format=rich-json, which always fits the limit.`,
  );
}

/** A 304 when If-None-Match matches `etag`: empty body, the current Service-Revision and ETag. */
export function notModified(ctx: RequestContext, ifNoneMatch: string | undefined, revision: string, etag: string): PlainResponse | null {
  if (ifNoneMatch === undefined || !etagMatches(ifNoneMatch, etag)) return null;
  const headers = baseHeaders(ctx, null);
  headers['service-revision'] = revision;
  headers.etag = etag;
  return { status: 304, headers };
}

/** 200 with the representation (rich-json and blocks as JSON envelopes, markdown as text with its loss count). */
export function representationResponse(ctx: RequestContext, read: DocumentRead): PlainResponse {
  const revisionHeaders = { 'service-revision': read.revision, etag: weakEtag(read.revision, read.format) };
  if (read.format === 'rich-json') return ok(ctx, 200, documentDataBody(read.document), { headers: revisionHeaders });
  if (read.format === 'blocks') {
    const data = `{"v":1,"documentRef":"${read.documentRef}","version":${read.version},"blocks":${JSON.stringify(read.blocks)}}`;
    if (exceedsBytes(data, MAX_RESPONSE_BODY - 1024)) throw tooLargeFor('blocks');
    return ok(ctx, 200, data, { headers: revisionHeaders });
  }
  const headers = baseHeaders(ctx, 'text/markdown; charset=utf-8');
  Object.assign(headers, revisionHeaders);
  headers['x-service-markdown-loss-count'] = String(read.lossCount);
  if (exceedsBytes(read.markdown, MAX_RESPONSE_BODY)) throw tooLargeFor('markdown');
  return { status: 200, headers, body: read.markdown };
}
