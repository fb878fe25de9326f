/**
 * The dev server's request log: one line per request, written when the handler has answered.
 * @remarks What a line carries: time, method, path, status, duration in ms, request id and, for 4xx and
 * 5xx, the error code and message from the answer's envelope. What it never carries: headers (they hold
 * bearer tokens, operator keys and cookies) and query values other than a few harmless ones (a token
 * pasted into a URL must not end up in a log file); anything shaped like a bearer token is masked in
 * the path and the message too. For event streams the duration is the time until the stream starts.
 * @module
 */
import type { Handler, PlainResponse } from '../src/api/types.ts';

/** One logged request. */
export interface RequestLogEntry {
  /** ISO 8601 time the request arrived. */
  time: string;
  method: string;
  /** Path with masked query values (see {@link safePath}). */
  path: string;
  /** The library command type of `POST /api/v1/library` (`save-link`, `get` …), when the body names one. */
  command?: string;
  status: number;
  /** Handler time in milliseconds, 0.1 ms resolution. */
  durationMs: number;
  /** The answer's X-Request-Id, or null when it has none. */
  requestId: string | null;
  /** For 4xx and 5xx answers with an error envelope. */
  error?: { code: string; message: string };
}

/** Log formats of `kw serve --log`. */
export type RequestLogFormat = 'text' | 'json';

/** Query parameters whose values are shown; every other value is replaced by `***`. */
const SHOWN_QUERY = new Set(['format', 'limit', 'cursor', 'after', 'kind', 'state', 'scope']);
const TOKEN_LIKE = /(svc_agent_v1_scred_)[A-Za-z0-9_-]+/g;

/** Mask anything shaped like a bearer token. */
export function maskTokens(text: string): string {
  return text.replace(TOKEN_LIKE, '$1***');
}

/** The request target as it may be logged: known harmless query values kept, the rest masked. */
export function safePath(url: string): string {
  const q = url.indexOf('?');
  const path = maskTokens(q === -1 ? url : url.slice(0, q));
  if (q === -1) return path;
  const parts = url
    .slice(q + 1)
    .split('&')
    .filter((p) => p !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      if (eq === -1) return maskTokens(name);
      return SHOWN_QUERY.has(name) ? maskTokens(pair) : `${maskTokens(name)}=***`;
    });
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

const decoder = new TextDecoder();

/** The error code and message of an error envelope, or undefined when the body is not one. */
function errorOf(response: PlainResponse): { code: string; message: string } | undefined {
  const body = response.body;
  if (body === undefined) return undefined;
  try {
    const json = JSON.parse(typeof body === 'string' ? body : decoder.decode(body)) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = json.error ?? {};
    if (typeof code !== 'string') return undefined;
    return { code, message: maskTokens(typeof message === 'string' ? message : '') };
  } catch {
    return undefined;
  }
}

const LIBRARY_PATH = /^\/api\/v1\/library(?:\?|$)/;
const COMMAND_TYPE = /^[a-z][a-z-]{0,39}$/;

/** The `type` of a library command body (a short kebab-case name), or undefined. */
export function libraryCommandOf(method: string, url: string, body: Uint8Array | null): string | undefined {
  if (method !== 'POST' || body === null || body.byteLength === 0 || !LIBRARY_PATH.test(url)) return undefined;
  try {
    const type = (JSON.parse(decoder.decode(body)) as { type?: unknown } | null)?.type;
    return typeof type === 'string' && COMMAND_TYPE.test(type) ? type : undefined;
  } catch {
    return undefined;
  }
}

/** One entry as a line: JSON, or `time method path [(command)] status duration requestId [code "message"]`. */
export function formatEntry(entry: RequestLogEntry, format: RequestLogFormat): string {
  if (format === 'json') return JSON.stringify(entry);
  const base = `${entry.time} ${entry.method} ${entry.path}${entry.command ? ` (${entry.command})` : ''} ${entry.status} ${entry.durationMs.toFixed(1)}ms ${entry.requestId ?? '-'}`;
  return entry.error ? `${base} ${entry.error.code} ${JSON.stringify(entry.error.message)}` : base;
}

/**
 * Wrap a handler so that every answered request is written as one line to `write`.
 * @param now - monotonic milliseconds (tests pass a fake); default `performance.now`.
 */
export function withRequestLog(
  handler: Handler,
  write: (line: string) => void,
  format: RequestLogFormat,
  now: () => number = () => performance.now(),
): Handler {
  const logged: Handler = async (request) => {
    const time = new Date().toISOString();
    const started = now();
    const response = await handler(request);
    const command = libraryCommandOf(request.method, request.url, request.body);
    const entry: RequestLogEntry = {
      time,
      method: request.method,
      path: safePath(request.url),
      ...(command === undefined ? {} : { command }),
      status: response.status,
      durationMs: Math.round((now() - started) * 10) / 10,
      requestId: response.headers['x-request-id'] ?? null,
    };
    if (response.status >= 400) {
      const error = errorOf(response);
      if (error) entry.error = error;
    }
    write(formatEntry(entry, format));
    return response;
  };
  if (handler.bodyLimit) logged.bodyLimit = handler.bodyLimit;
  if (handler.streamsBody) logged.streamsBody = handler.streamsBody;
  return logged;
}

/** The batchers' flushes, run when the process exits (a stop writes every line it answered). */
const atExit = new Set<() => void>();
let flushingAtExit = false;

/**
 * Lines written together: a line waits at most `delayMs` (50 ms: unnoticed by a person reading the
 * log) or for `maxLines` (256) lines, and goes out in one write with the others.
 * @remarks Node writes to a terminal, a pipe or a file synchronously on Linux, one system call per
 * write: a line per request cost `kw serve` on a terminal 90% of its GET throughput (bench/README.md,
 * "What a user's client sees": 4,152 against 44,361 answers/s quiet). `flush()` writes what waits at
 * once (before another message, and at exit, so no line is lost on a stop).
 */
export function lineBatcher(writeLines: (text: string) => void, maxLines = 256, delayMs = 50): { line(line: string): void; flush(): void } {
  let pending: string[] = [];
  if (!flushingAtExit) {
    flushingAtExit = true;
    process.on('exit', () => {
      for (const f of atExit) f();
    });
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    writeLines(lines.join('\n'));
  };
  atExit.add(flush);
  return {
    line(line) {
      pending.push(line);
      if (pending.length >= maxLines) flush();
      else if (timer === null) {
        timer = setTimeout(flush, delayMs);
        timer.unref?.(); // a waiting line does not keep the process alive; exit flushes it
      }
    },
    flush,
  };
}
