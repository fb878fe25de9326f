/**
 * The worker side of the extraction pool: a thread that reads HTML and PDF pages for the main thread.
 * @remarks One request at a time arrives from {@link ExtractorPool}; the answer is posted back with
 * the request's id. The thread first posts `{ ready: true }` once its modules are loaded, so that the
 * pool's per-page time limit never counts the thread's start. unpdf (the larger module) is loaded on
 * the first PDF only.
 * @module
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { ExtractedText } from '../../src/library/capture-port.ts';
import { decodeHtml, extractHtml } from './html-text.ts';

/** `workerData.role` of an extraction thread (the kw bundle tells its own threads apart by it). */
export const EXTRACT_WORKER_ROLE = 'kw-capture-extract';

/** One page to read. `bytes` is the thread's own copy (transferred). */
export interface ExtractRequest {
  id: number;
  kind: 'html' | 'pdf';
  bytes: Uint8Array;
  url: string;
  charset: string | null;
}

/** The thread's answer to one {@link ExtractRequest}, or its start signal. */
export type ExtractReply = { ready: true } | { id: number; ok: true; text: ExtractedText } | { id: number; ok: false; message: string };

/** True inside a thread started by the pool (whatever module it runs). */
export function isExtractWorker(): boolean {
  return !isMainThread && (workerData as { role?: unknown } | null)?.role === EXTRACT_WORKER_ROLE;
}

async function read(request: ExtractRequest): Promise<ExtractedText> {
  if (request.kind === 'pdf') {
    const { extractPdf } = await import('./pdf-text.ts');
    return extractPdf(request.bytes);
  }
  return extractHtml(decodeHtml(request.bytes, request.charset), request.url);
}

/** Serve extraction requests on this thread's parent port (call once, inside an extraction thread). */
export function serveExtractions(): void {
  const port = parentPort;
  if (!port) throw new Error('serveExtractions runs inside a worker thread');
  port.on('message', (request: ExtractRequest) => {
    read(request).then(
      (text) => port.postMessage({ id: request.id, ok: true, text } satisfies ExtractReply),
      (e: unknown) => port.postMessage({ id: request.id, ok: false, message: String((e as Error)?.message ?? e) } satisfies ExtractReply),
    );
  });
  port.postMessage({ ready: true } satisfies ExtractReply);
}
