/**
 * The contract's size limits of requests and responses, in one place for the domain, the edge and
 * the transports.
 * @module
 */

/** Request body limit: 256 KB. A larger body is INVALID_REQUEST. */
export const MAX_REQUEST_BODY = 256 * 1024;
/** Response body limit: 2 MB. A larger canonical document or report is unreadable through the API. */
export const MAX_RESPONSE_BODY = 2 * 1024 * 1024;
/** Upload body limit (library file uploads, `PUT /api/v1/library/uploads/{uploadId}`): 20 MiB. */
export const MAX_UPLOAD_BODY = 20 * 1024 * 1024;

/** Most events one JSON page of a job's events carries. */
export const EVENT_PAGE_MAX = 256;
/** Event streams: the `retry` sent first, keep-alive after silence, and when a stream closes (events, ms). */
export const SSE_DEFAULTS = { retryMs: 5000, keepAliveMs: 15_000, maxEvents: 1024, maxMs: 20_000 } as const;
/** Event fan-out pacing: stored event writes per second, and the longest a burst's events are held together. */
export const DEFAULT_PACING = { writesPerSecond: 20_000, maxCoalesceMs: 50 } as const;
/** Research reports: size, Markdown loss issues reported, blocks per mutation while writing, title length. */
export const ReportLimits = { maxBytes: 760_000, maxLossIssues: 256, blocksPerMutation: 50, titleMax: 240 } as const;
/** Page sizes of every list: 1-50, 20 when the request names none. */
export const LIST_LIMIT = { min: 1, max: 50, default: 20 } as const;
