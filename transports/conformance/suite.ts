/**
 * The API scenario suite: one black-box conformance suite that every transport runs.
 *
 * It talks to the service through `fetch` only, creates its credentials through the operator API, and
 * asserts what the published contract and the documented choices (docs/http-api.md) say: statuses, headers, envelope shapes, formats and
 * limits. It never imports the server. Where the contract admits more than one reasonable reading, the
 * scenario accepts each of them and says so in a comment. The scenarios live beside it, one file per area.
 * @example
 * apiScenarios('inproc', async () => ({ fetch, baseUrl: 'http://kw.local', operatorKey, teardown }));
 * @module
 */
import { suite } from 'uvu';
import { accessScenarios } from './access.ts';
import { ScenarioClient, type ScenarioTarget } from './client.ts';
import { documentScenarios } from './documents.ts';
import { envelopeScenarios } from './envelope.ts';
import { createKit } from './scenario-kit.ts';
import { mutationScenarios } from './mutations.ts';
import { surfaceScenarios } from './surfaces.ts';
import { wholeSuiteScenarios } from './whole.ts';

export type { ScenarioTarget } from './client.ts';

/**
 * Register the API scenario suite for one transport.
 * @param name - the transport's name (the suite's title).
 * @param setup - starts a fresh service (memory storage, no seed) and says how to reach it.
 * @remarks Scenarios run in order against one service; each uses its own accounts and credentials.
 * The operator activation switch is restored by the scenario that flips it. The whole-suite checks
 * (envelopes, Retry-After, X-Request-Id, OpenAPI response schemas over every answer seen) run last.
 */
export function apiScenarios(name: string, setup: () => Promise<ScenarioTarget>): void {
  const s = suite(`api scenarios over ${name}`);
  let target: ScenarioTarget | null = null;
  const c = new ScenarioClient(() => {
    if (target === null) throw new Error('the scenario target is not set up');
    return target;
  });
  s.before(async () => {
    target = await setup();
  });
  s.after(async () => {
    await target?.teardown();
  });
  const kit = createKit(c);
  envelopeScenarios(s, kit);
  documentScenarios(s, kit);
  mutationScenarios(s, kit);
  accessScenarios(s, kit);
  surfaceScenarios(s, kit);
  wholeSuiteScenarios(s, kit);
  s.run();
}
