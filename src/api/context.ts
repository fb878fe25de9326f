/**
 * What one request carries through the pipeline.
 * @module
 */
import type { ActivationState } from '../auth/activation.ts';
import type { BudgetStatus } from '../auth/budgets.ts';
import type { Credential } from '../auth/credentials.ts';
import type { Engine } from '../engine.ts';
import type { SseLimits } from './sse.ts';
import type { PlainRequest } from './types.ts';

/** How the embedding program set up the edge (see `ApiHandlerOptions`). */
export interface EdgeSettings {
  /** The person's document pages: `sign-in-required` (401 note), `open` (local dev view) or `off` (404). */
  documentPages: 'sign-in-required' | 'open' | 'off';
  /** The published OpenAPI document as JSON text. */
  openApiJson: () => string;
  /** Limits of event streams (the contract's values unless the embedding program sets others). */
  eventStreams: SseLimits;
  /** The account the operator API's credentials and sign-in links default to (the local person's); default `owner`. */
  localAccount?: string;
}

/** The state of one request as the pipeline fills it in. */
export interface RequestContext {
  readonly engine: Engine;
  readonly request: PlainRequest;
  readonly settings: EdgeSettings;
  /** Server-minted; also the X-Request-Id response header. */
  readonly requestId: string;
  /** The client's valid X-Request-Id, echoed as meta.clientRequestId. */
  clientRequestId: string | undefined;
  /** The verified credential of a bearer operation. */
  credential: Credential | null;
  /** Budget standing after this request's charge (null until charged). */
  budget: BudgetStatus | null;
  /** Effective activation state (stored state with the embedding program's overrides). */
  activation(): Promise<ActivationState>;
  /**
   * Charge the budget once (no-op when already charged or anonymous). Throws RATE_LIMITED; with a
   * storage shared by processes it returns a promise (the charge is atomic in the storage) to await.
   */
  charge(): void | Promise<void>;
}
