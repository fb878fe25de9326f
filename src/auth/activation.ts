/**
 * Activation state of the surfaces the operator can switch (docs/http-api.md):
 * search and review reads are blocked, proposals are active.
 * @remarks The state is one storage record, cached in memory after the first read. With several
 * processes sharing a store, a switch takes effect in the process that made it; the others pick it up
 * after a restart.
 * @module
 */
import type { EngineDeps } from '../deps.ts';

/** Storage collection and key of the activation record. */
export const ACTIVATION_COLLECTION = 'activation';
export const ACTIVATION_KEY = 'state';

/** Which switchable surfaces are active. */
export interface ActivationState {
  search: boolean;
  reviews: boolean;
  proposals: boolean;
}

/** The switchable surfaces, by their names in {@link ActivationState}. */
export const ACTIVATION_SURFACES: readonly (keyof ActivationState)[] = ['search', 'reviews', 'proposals'];

/** What each surface is called in messages (a blocked request names it). */
export const SURFACE_NAMES: Readonly<Record<keyof ActivationState, string>> = { search: 'Search', reviews: 'Reading reviews', proposals: 'Proposal submission' };

/** True for the name of a switchable surface. */
export function isActivationSurface(name: string): name is keyof ActivationState {
  return (ACTIVATION_SURFACES as readonly string[]).includes(name);
}

/** The documented defaults. */
export const DEFAULT_ACTIVATION: Readonly<ActivationState> = Object.freeze({ search: false, reviews: false, proposals: true });

/** The operator's switches. */
export interface Activation {
  /** The whole current state. */
  get(): Promise<ActivationState>;
  /** Change some switches; returns the whole new state. */
  set(partial: Partial<ActivationState>): Promise<ActivationState>;
}

/** Build the activation service over the engine's storage. */
export function createActivation(deps: EngineDeps): Activation {
  let state: ActivationState | null = null;
  let loading: Promise<ActivationState> | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  function load(): Promise<ActivationState> {
    if (state) return Promise.resolve(state);
    loading ??= deps.storage
      .getRecord<Partial<ActivationState>>(ACTIVATION_COLLECTION, ACTIVATION_KEY)
      .then((rec) => {
        state ??= { ...DEFAULT_ACTIVATION, ...pick(rec?.value ?? {}) };
        return state;
      })
      .finally(() => {
        loading = null;
      });
    return loading;
  }

  return {
    async get() {
      return { ...(await load()) };
    },
    set(partial) {
      const run = queue.then(async () => {
        const next: ActivationState = { ...(await load()), ...pick(partial) };
        await deps.storage.commit([{ kind: 'record.put', collection: ACTIVATION_COLLECTION, key: ACTIVATION_KEY, value: { ...next } }]);
        state = next;
        return { ...next };
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

function pick(value: Partial<ActivationState>): Partial<ActivationState> {
  const out: Partial<ActivationState> = {};
  if (typeof value.search === 'boolean') out.search = value.search;
  if (typeof value.reviews === 'boolean') out.reviews = value.reviews;
  if (typeof value.proposals === 'boolean') out.proposals = value.proposals;
  return out;
}
