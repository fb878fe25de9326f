/**
 * What one request carries through the pipeline, and how an operation is declared.
 * @module
 */
import type { ActivationState } from '../auth/activation.ts';
import type { BudgetStatus } from '../auth/budgets.ts';
import type { Credential } from '../auth/credentials.ts';
import type { Scope } from '../auth/scopes.ts';
import type { Engine } from '../engine.ts';
import type { PlainRequest, PlainResponse } from './types.ts';

/** The state of one request as the pipeline fills it in. */
export interface RequestContext {
  readonly engine: Engine;
  readonly request: PlainRequest;
  /** Server-minted; also the X-Request-Id response header. */
  readonly requestId: string;
  /** The client's valid X-Request-Id, echoed as meta.clientRequestId. */
  clientRequestId: string | undefined;
  /** Path parameters in the order of the route pattern. */
  params: readonly string[];
  /** Raw query string without `?` ('' when absent). */
  query: string;
  /** The verified credential of a bearer operation. */
  credential: Credential | null;
  /** Budget standing after this request's charge (null until charged). */
  budget: BudgetStatus | null;
  /** The parsed JSON body of an operation declared with `body: 'json'`. */
  body: unknown;
  /** Effective activation state (stored state with the embedding program's overrides). */
  activation(): Promise<ActivationState>;
  /** Charge the budget once (no-op when already charged or anonymous). Throws RATE_LIMITED. */
  charge(): void;
}

/**
 * How an operation is authenticated and what the pipeline does before it runs.
 * @remarks The pipeline order is fixed: route, X-Request-Id, auth, scope, activation, budget charge,
 * body size, JSON body, then `run`.
 */
export interface Operation {
  auth: 'bearer' | 'operator' | 'none';
  /** Every one of these scopes is needed. */
  allScopes?: readonly Scope[];
  /** At least one of these scopes is needed. */
  anyScopes?: readonly Scope[];
  /** An activation switch: when off, 503 without charging. */
  activation?: keyof ActivationState;
  /** `before`: the pipeline charges; `never`: nothing is charged; `self`: `run` calls `ctx.charge()`. */
  charge: 'before' | 'never' | 'self';
  /** `json`: a JSON body is required and parsed into `ctx.body`. */
  body?: 'json';
  run(ctx: RequestContext): Promise<PlainResponse> | PlainResponse;
}

/** One path of the route table and its operations by method. */
export interface RouteDef {
  /** Path with `:name` segments, e.g. `/api/v1/documents/:documentRef`. */
  path: string;
  methods: Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', Operation>>;
}
