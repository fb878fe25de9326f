/**
 * `createClient`: the typed client, one method per public operation of the contract, over any
 * fetch (global fetch, the in-process fetch, a worker host's fetch). Inputs and results are typed from
 * the contract entries: `v.InferInput` of each body schema, `v.InferOutput` of each 2xx response schema.
 * @module
 */
import type { AnyOperation } from '../contract/define.ts';
import { contractOperations } from '../contract/operations.ts';
import { callOperation, createKy, type CallOptions, type CallSettings, type RawInput } from './call.ts';
import { followJobEvents, type FollowOptions, type JobEvent } from './events.ts';
import type { OperationId, OperationMethod } from './types.ts';
import { readPlanMutate, type ReplanOptions, type ReplanOutcome, type MutationPlanner } from './replan.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';

/** The public operations of the contract by operationId. */
function publicOperations(): ReadonlyMap<string, AnyOperation> {
  return new Map(contractOperations.filter((op) => op.audience === 'public').map((op) => [op.operationId, op]));
}

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Origin (and mount path, if any) of the service, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** The bearer token (omit for anonymous operations only). */
  token?: string;
  /** Default: the global fetch. Pass `createFetch(handler)` or a worker host's `fetch` to skip the network. */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** A fresh idempotency key per new intent; default `crypto.randomUUID()`. */
  newKey?: () => string;
  /** Check success bodies against the declared response schemas; default false. */
  validateResponses?: boolean;
  /** Per-request timeout until the answer's head arrives; default none. */
  timeoutMs?: number | false;
}

/** The typed client. */
export type Client = { readonly [K in OperationId]: OperationMethod<K> } & {
  /**
   * Read a document, plan a mutation from what was read, send it with the read's revision; on 412
   * read and plan again (a new intent, so a new idempotency key), at most `maxAttempts` times.
   */
  mutateWithReplan(documentRef: string, plan: MutationPlanner, options?: ReplanOptions): Promise<ReplanOutcome>;
  /** Follow a job's events over SSE until its terminal event; resumes with Last-Event-ID after a drop. */
  jobEvents(jobId: string, options?: FollowOptions): AsyncIterable<JobEvent>;
};

/**
 * Create a typed client.
 * @example
 * const client = createClient({ baseUrl: 'http://kw.local', token, fetch: createFetch(handler) });
 * const { body } = await client.createDocument({ body: { v: 1, title: 'Notes' } });
 * const doc = await client.getDocument({ path: { documentRef: body!.data.documentRef }, query: { format: 'blocks' } });
 * @remarks Writes get a fresh Idempotency-Key per call unless one is given; every retry of the call
 * sends the same key. Retries: 429 and 503 after Retry-After (up to `retry.maxDelayMs`), 500 and a
 * network failure once; never any other status. Error answers throw an `ApiClientError`.
 */
export function createClient(options: ClientOptions): Client {
  const settings: CallSettings = {
    baseUrl: options.baseUrl,
    token: options.token,
    ky: createKy(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), options.timeoutMs ?? false),
    retry: { ...DEFAULT_RETRY, ...options.retry },
    newKey: options.newKey ?? (() => crypto.randomUUID()),
    validate: options.validateResponses ?? false,
  };
  const client: Record<string, unknown> = {};
  const operations = publicOperations();
  for (const [id, op] of operations) {
    client[id] = (input: RawInput = {}, callOptions?: CallOptions) => callOperation(op, settings, input, callOptions);
  }
  const typed = client as unknown as Client;
  client.mutateWithReplan = (documentRef: string, plan: MutationPlanner, replan?: ReplanOptions) => readPlanMutate(typed, documentRef, plan, replan);
  client.jobEvents = (jobId: string, follow?: FollowOptions) => followJobEvents(operations.get('listResearchJobEvents')!, settings, jobId, follow);
  return typed;
}
