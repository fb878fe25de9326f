/**
 * One call of one operation: the request built from the declaration (path, query, headers by their
 * wire names, JSON body), sent with ky over the client's fetch, retried as the contract allows with
 * the same idempotency key, and its answer turned into a typed result or an {@link ApiClientError}.
 * @module
 */
import ky, { type KyInstance, type Options } from 'ky';
import * as v from 'valibot';
import type { AnyOperation, HeaderDef } from '../contract/define.ts';
import { ErrorEnvelopeSchema } from '../contract/response-schemas.ts';
import { successSchemas } from '../contract/define.ts';
import { operationPath } from '../contract/links.ts';
import { ApiClientError } from './errors.ts';
import { retryDelay, sleep, type AttemptCounts, type AttemptFailure, type RetryPolicy } from './retry.ts';

/** Settings every call of a client shares. */
export interface CallSettings {
  baseUrl: string;
  token: string | undefined;
  ky: KyInstance;
  retry: RetryPolicy;
  newKey: () => string;
  /** Check every success body against the operation's 2xx response schemas (INVALID_RESPONSE otherwise). */
  validate: boolean;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Extra request headers (e.g. `x-request-id`). */
  headers?: Record<string, string>;
  /** Another bearer token for this call. */
  token?: string;
}

/** A successful answer (2xx, or 304 for a conditional read). */
export interface ApiResult<B> {
  status: number;
  headers: Headers;
  /** The parsed JSON body; null for 304, 204 and non-JSON bodies (Markdown: see `text`). */
  body: B | null;
  /** The body as text ('' when there is none). */
  text: string;
  /** X-Request-Id of the answer. */
  requestId: string | null;
  /** The idempotency key the call sent (writes), the same on every retry. */
  idempotencyKey: string | undefined;
  attempts: number;
}

/** The raw input of a call, by logical name. */
export interface RawInput {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string | undefined>;
  idempotencyKey?: string;
  body?: unknown;
  bytes?: Uint8Array;
}

/** Build the request URL of an operation from its path template and query values. */
export function operationUrl(op: AnyOperation, baseUrl: string, input: RawInput): string {
  const path = operationPath(op, input.path ?? {});
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined) query.set(name, String(value));
  const search = query.size ? `?${query}` : '';
  return `${baseUrl.replace(/\/+$/, '')}${path}${search}`;
}

/** The request headers of a call: auth, inputs by wire name, the idempotency key, JSON content type. */
function requestHeaders(op: AnyOperation, settings: CallSettings, input: RawInput, key: string | undefined, options: CallOptions): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = options.token ?? settings.token;
  if (op.auth === 'bearer' && token !== undefined) headers.authorization = `Bearer ${token}`;
  for (const [logical, def] of Object.entries(op.input.headers ?? {}) as [string, HeaderDef][]) {
    const value = logical === 'idempotencyKey' ? key : input.headers?.[logical];
    if (value !== undefined) headers[def.name.toLowerCase()] = value;
  }
  if (op.input.body) headers['content-type'] = 'application/json';
  else if (op.input.bytes) headers['content-type'] = 'application/octet-stream';
  if (options.headers) for (const [name, value] of Object.entries(options.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

function errorFromAnswer(op: AnyOperation, status: number, text: string, headers: Headers, attempts: number): ApiClientError {
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: reported below as INVALID_RESPONSE
  }
  const envelope = v.safeParse(ErrorEnvelopeSchema, parsed);
  if (!envelope.success) {
    return new ApiClientError({
      status,
      code: 'INVALID_RESPONSE',
      message: `The answer (${status}) is not the contract's error envelope: ${text.slice(0, 200)}`,
      retryable: false,
      requestId: headers.get('x-request-id') ?? undefined,
      operationId: op.operationId,
      attempts,
    });
  }
  const { error, meta } = envelope.output;
  return new ApiClientError({
    status,
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    fieldErrors: error.fieldErrors,
    requiredAction: error.requiredAction,
    retryAfterMs: error.retryAfterMs,
    requestId: meta.requestId,
    clientRequestId: meta.clientRequestId,
    operationId: op.operationId,
    attempts,
  });
}

function isAbort(e: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (e instanceof Error && e.name === 'AbortError');
}

/**
 * Send a request for `op`, retrying as the contract allows; resolve with the raw Response of the
 * first answer that is not retried (any status). The body of an answer that is retried is drained.
 */
export async function sendWithRetries(
  op: AnyOperation,
  settings: CallSettings,
  input: RawInput,
  options: CallOptions,
  accept?: string,
): Promise<{ response: Response; key: string | undefined; attempts: number }> {
  const key = op.input.headers?.idempotencyKey ? (input.idempotencyKey ?? settings.newKey()) : undefined;
  const url = operationUrl(op, settings.baseUrl, input);
  const headers = requestHeaders(op, settings, input, key, options);
  if (accept !== undefined) headers.accept = accept;
  const init: Options = { method: op.method, headers };
  if (op.input.body) init.body = JSON.stringify(input.body);
  else if (op.input.bytes) init.body = (input.bytes ?? new Uint8Array(0)) as Uint8Array<ArrayBuffer>;
  if (options.signal) init.signal = options.signal;
  const counts: AttemptCounts = { total: 0, network: 0, internal: 0 };
  for (;;) {
    counts.total++;
    let failure: AttemptFailure;
    let lastError: unknown;
    let response: Response | null = null;
    try {
      response = await settings.ky(url, init);
    } catch (e) {
      if (isAbort(e, options.signal)) throw e;
      lastError = e;
    }
    if (response === null) {
      counts.network++;
      failure = { kind: 'network' };
    } else {
      const status = response.status;
      if (status !== 429 && status !== 503 && status !== 500) return { response, key, attempts: counts.total };
      if (status === 500) counts.internal++;
      const peek = await response.clone().text();
      let retryAfterMs: number | undefined;
      try {
        retryAfterMs = (JSON.parse(peek) as { error?: { retryAfterMs?: number } }).error?.retryAfterMs;
      } catch {
        retryAfterMs = undefined;
      }
      failure = { kind: 'status', status, retryAfterMs, retryAfterHeader: response.headers.get('retry-after') };
    }
    const delay = retryDelay(failure, counts, settings.retry);
    if (delay === null) {
      if (response !== null) return { response, key, attempts: counts.total };
      throw new ApiClientError({
        status: 0,
        code: 'NETWORK_ERROR',
        message: `no answer from ${url}: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
        retryable: true,
        operationId: op.operationId,
        attempts: counts.total,
        cause: lastError,
      });
    }
    await response?.body?.cancel().catch(() => undefined);
    await sleep(delay, options.signal);
  }
}

/** Call `op`: a typed result for 2xx/304, an {@link ApiClientError} for everything else. */
export async function callOperation<B>(op: AnyOperation, settings: CallSettings, input: RawInput, options: CallOptions = {}): Promise<ApiResult<B>> {
  const { response, key, attempts } = await sendWithRetries(op, settings, input, options);
  const text = await response.text();
  const status = response.status;
  if (status >= 400) throw errorFromAnswer(op, status, text, response.headers, attempts);
  const isJson = /^application\/(?:[\w.+-]+\+)?json/i.test(response.headers.get('content-type') ?? '');
  let body: B | null = null;
  if (isJson && text !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ApiClientError({ status, code: 'INVALID_RESPONSE', message: 'The success body is not JSON.', retryable: false, operationId: op.operationId, attempts, cause: e });
    }
    const schemas = successSchemas(op);
    if (settings.validate && schemas.length && !schemas.some((s) => v.safeParse(s, parsed).success)) {
      const issues = v.safeParse(schemas[0]!, parsed).issues?.map((i) => `${v.getDotPath(i) ?? '$'}: ${i.message}`).slice(0, 5);
      throw new ApiClientError({
        status,
        code: 'INVALID_RESPONSE',
        message: `The success body does not match the declared schema: ${issues?.join('; ')}`,
        retryable: false,
        operationId: op.operationId,
        attempts,
      });
    }
    body = parsed as B;
  }
  return { status, headers: response.headers, body, text, requestId: response.headers.get('x-request-id'), idempotencyKey: key, attempts };
}

/** The ky instance of a client: no retries of its own (the client decides), no timeout unless asked. */
export function createKy(fetchImpl: typeof fetch, timeoutMs: number | false): KyInstance {
  return ky.create({ fetch: fetchImpl, retry: 0, throwHttpErrors: false, timeout: timeoutMs });
}
