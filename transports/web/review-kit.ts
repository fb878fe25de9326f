/**
 * Test kit of the browser app: a research runner that leaves a review waiting for the person, and
 * the start of one such job. The runner stages a report citing sources, submits a proposal, waits in
 * phase requesting-review with `requiredAction: "review-in-browser"`, and goes on once the person
 * decides (accept: succeeded; reject: failed), learning of the decision through the storage's change
 * notification on the proposal.
 * @module
 */
import { SCOPES } from '../../src/auth/scopes.ts';
import type { Actor } from '../../src/actor.ts';
import type { Engine } from '../../src/engine.ts';
import type { ResearchRunContext, ResearchRunner } from '../../src/jobs/runner.ts';
import { KnowledgeCollections, type ProposalRecord } from '../../src/knowledge/records.ts';
import { recordTopic } from '../../src/ports.ts';
import { specBody } from '../../src/jobs/jobs-kit.ts';

/** What the kit's job proposes. */
export const KIT_PROPOSAL = {
  v: 2,
  entities: [
    { key: 'yjs', name: 'Yjs', description: 'A CRDT framework for shared editing.', language: 'en', identifiers: ['https://github.com/yjs/yjs'], concepts: ['concept'] },
  ],
  facts: [{ key: 'kind', subject: 'yjs', predicate: 'description', stance: 'supports', object: { kind: 'text', language: 'en', text: 'Yjs documents merge concurrent edits without a server.' } }],
  evidence: [{ key: 'ev', factKey: 'kind', bearing: 'supports', selector: null, source: { kind: 'uri', uri: 'https://docs.yjs.dev/' } }],
  inquiries: [{ key: 'merge', question: 'How does Yjs merge concurrent edits?', answerForm: 'evidence-review', language: 'en', parentKeys: [] }],
};

/** The kit job's spec. */
export const KIT_SPEC = specBody({
  question: 'How does Yjs merge concurrent edits?',
  visibilityIntent: 'request-publication',
  deliverable: { kind: 'report', form: 'evidence-review', language: 'en' },
  spaceRef: { kind: 'new-document', title: 'Yjs merging' },
});

async function decided(engine: Engine, ctx: ResearchRunContext, proposalRef: string): Promise<ProposalRecord['state']> {
  const { storage } = engine.deps;
  for (;;) {
    let wake: () => void = () => undefined;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    const off = storage.subscribe(recordTopic(KnowledgeCollections.proposals, proposalRef), () => wake());
    const onAbort = () => wake();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const p = (await storage.getRecord<ProposalRecord>(KnowledgeCollections.proposals, proposalRef))?.value;
      if (p && p.state !== 'proposed' && p.state !== 'in-review') return p.state;
      if (ctx.signal.aborted) return 'withdrawn';
      await changed;
    } finally {
      off();
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The runner; `engine` is resolved lazily (the runner is passed to `createEngine` before the engine exists). */
export function reviewRunner(engine: () => Engine): ResearchRunner {
  return {
    async run(job, ctx) {
      await ctx.setPhase('planning', 'Planning');
      await ctx.setPhase('synthesizing', 'Writing the report');
      await ctx.stageReport({
        title: 'Yjs merging',
        blocks: [
          { type: 'heading', level: 1, markdown: 'How Yjs merges' },
          { type: 'paragraph', markdown: 'Yjs orders concurrent inserts with YATA ([Nicolaescu et al., 2016](https://doi.org/10.1145/2957276.2957310)); see [the Yjs docs](https://docs.yjs.dev/).' },
        ],
      });
      await ctx.setPhase('proposing', 'Proposing');
      const proposal = await ctx.submitProposal(KIT_PROPOSAL, { idempotencyKey: `kit-proposal-${job.jobId}` } /* proposal keys belong to the account: one per job */);
      await ctx.setPhase('requesting-review', 'Waiting for the person');
      await ctx.waiting({ summary: 'Waiting for a person to review the proposal', requiredAction: 'review-in-browser' });
      const state = await decided(engine(), ctx, proposal.proposalRef);
      if (ctx.signal.aborted) return;
      if (state === 'accepted') {
        await ctx.setPhase('requesting-review', 'The person accepted the proposal');
        await ctx.succeed({ summary: 'Accepted by the person.' });
      } else {
        await ctx.fail({ message: `The person ${state === 'rejected' ? 'rejected' : 'withdrew'} the proposal.` });
      }
    },
  };
}

/** Start one kit job as `actor` and wait until its review waits for the person; its reviewRef and jobId. */
export async function startWaitingReview(engine: Engine, actor: Actor, key = 'kit-job-start-000001'): Promise<{ jobId: string; reviewRef: string }> {
  const { job } = await engine.jobs.start(actor, { idempotencyKey: key, body: KIT_SPEC });
  for await (const event of await engine.jobs.follow(actor, job.jobId)) {
    if (event.kind === 'job.waiting') break;
  }
  const { job: now } = await engine.jobs.read(actor, job.jobId);
  return { jobId: job.jobId, reviewRef: now.artifacts.review!.reviewRef };
}

/** A new researcher credential of `accountId` (every scope) whose job's review waits for the person. */
export async function researcherWithWaitingReview(engine: Engine, accountId = 'demo', key?: string): Promise<{ actor: Actor; token: string; jobId: string; reviewRef: string }> {
  const { credential, token } = await engine.credentials.create({ accountId, label: 'Researcher', scopes: SCOPES });
  return { actor: credential.actor, token, ...(await startWaitingReview(engine, credential.actor, key)) };
}
