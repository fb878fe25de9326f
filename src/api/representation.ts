/**
 * Answers for a document representation (a document read or a report export): the revision headers,
 * the weak ETag and its 304, and the body of each format.
 * @module
 */
import type { DocumentRead } from '../documents/types.ts';
import { documentDataBody } from './document-json.ts';
import type { RequestContext } from './context.ts';
import { baseHeaders, ok } from './envelope.ts';
import { etagMatches, weakEtag } from './http-util.ts';
import type { PlainResponse } from './types.ts';

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
    return ok(ctx, 200, data, { headers: revisionHeaders });
  }
  const headers = baseHeaders(ctx, 'text/markdown; charset=utf-8');
  Object.assign(headers, revisionHeaders);
  headers['x-service-markdown-loss-count'] = String(read.lossCount);
  return { status: 200, headers, body: read.markdown };
}
