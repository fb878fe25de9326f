/**
 * Read, plan, mutate: the loop the contract asks of a writer. A 412 means the document moved since
 * the read; the plan is made again from a fresh read, as a new intent with a new idempotency key.
 * @module
 */
import type { ApiResult } from './call.ts';
import { isApiClientError } from './errors.ts';
import type { CallInput, OperationMethod, SuccessBody } from './types.ts';

/** The two client methods the loop uses. */
export interface ReplanClient {
  getDocument: OperationMethod<'getDocument'>;
  mutateDocument: OperationMethod<'mutateDocument'>;
}

/** The body of a mutation request (`{ v: 1, intent, mutation }`). */
export type MutationRequestBody = CallInput<'mutateDocument'>['body'];

/** What a planner sees: the document as read, with the revision the mutation will be sent against. */
export interface DocumentSnapshot {
  documentRef: string;
  revision: string;
  /** The `data` of the read in the requested format (rich-json Document or the blocks representation). */
  data: NonNullable<SuccessBody<'getDocument'>>['data'];
}

/**
 * Plans a mutation from a snapshot; null means nothing is left to do (the loop ends without writing).
 * `attempt` is 1 for the first plan, 2 after the first 412, …
 */
export type MutationPlanner = (snapshot: DocumentSnapshot, attempt: number) => MutationRequestBody | null | Promise<MutationRequestBody | null>;

/** Options of the read-plan-mutate loop. */
export interface ReplanOptions {
  /** Plans at most this many times (each after a fresh read); default 3. */
  maxAttempts?: number;
  /** The representation the planner reads; default `blocks` (flat blocks with their ids). */
  format?: 'rich-json' | 'blocks';
  signal?: AbortSignal;
}

/** How the loop ended. */
export type ReplanOutcome =
  | { applied: true; attempts: number; result: ApiResult<SuccessBody<'mutateDocument'>>; snapshot: DocumentSnapshot }
  | { applied: false; attempts: number; snapshot: DocumentSnapshot };

/**
 * Run the loop.
 * @throws ApiClientError of the last 412 when every attempt met a newer revision, or any other error at once.
 */
export async function readPlanMutate(client: ReplanClient, documentRef: string, plan: MutationPlanner, options: ReplanOptions = {}): Promise<ReplanOutcome> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const call = options.signal ? { signal: options.signal } : {};
  for (let attempt = 1; ; attempt++) {
    const read = await client.getDocument({ path: { documentRef }, query: { format: options.format ?? 'blocks' } }, call);
    const revision = read.headers.get('service-revision');
    if (revision === null || read.body === null) throw new TypeError(`getDocument ${documentRef} answered without Service-Revision or a JSON body`);
    const snapshot: DocumentSnapshot = { documentRef, revision, data: read.body.data };
    const body = await plan(snapshot, attempt);
    if (body === null) return { applied: false, attempts: attempt, snapshot };
    try {
      const result = await client.mutateDocument({ path: { documentRef }, headers: { ifRevision: revision }, body }, call);
      return { applied: true, attempts: attempt, result, snapshot };
    } catch (e) {
      if (!isApiClientError(e) || e.status !== 412 || attempt >= maxAttempts) throw e;
    }
  }
}
