/**
 * Proposal submission (for research-job runners) and the decisions a person makes about it.
 * @remarks A submission stores the proposal, its review and its idempotency record in one batch and
 * reports conflicts with the current graph (same name, same identifier) without merging anything.
 * Accepting writes every graph record, the new graph revision, the space head (compare-and-set) and
 * the proposal in one batch; rejecting or withdrawing only changes the proposal.
 * @module
 */
import type { Links } from '../contract/links.ts';
import type { EngineDeps } from '../deps.ts';
import type { Actor } from '../actor.ts';
import { invalid, notFound, ServiceError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { IdempotencyStore, OPERATOR_KEY_OWNER, createdReceipt, requireIdempotencyKey, newReceiptRef, replayedReceipt, writeScope, type IdempotencyRecord, type WriteReceipt } from '../idempotency/idempotency.ts';
import { isStorageConflict, type BatchOp } from '../ports.ts';
import { canonicalJson } from '../canonical-json.ts';
import { acceptedRecords, genesisRevision, nextRevision } from './graph.ts';
import { findConflicts, lookupOps } from './lookup.ts';
import { parseProposalRequest } from './proposal-request.ts';
import type { ProposalSubmissionResult } from './proposal-schema.ts';
import { KnowledgeCollections, ordinalKey, type ProposalRecord, type SpaceRecord } from './records.ts';
import type { SpaceDirectory } from './spaces.ts';
import { transitionProposal, type ProposalDecision } from './states.ts';

/** Who submits: the research job's actor, the job, and the space the job works in. */
export interface SubmissionRun {
  actor: Actor;
  jobId: string;
  spaceRef: string;
}

/** A person's decision about a proposal (operator / in-process). */
export interface DecisionInput {
  decision: ProposalDecision;
  /** The deciding person, 1-80 characters. */
  person: string;
  note?: string | null | undefined;
}

/** A decision made under an idempotency key: the proposal as it is now and the decision's receipt. */
export interface DecisionOutcome {
  proposal: ProposalRecord;
  receipt: WriteReceipt;
}

/** Check a deciding person's name. */
export function checkPerson(person: unknown, field = 'person'): string {
  if (typeof person !== 'string' || person.trim().length === 0 || person.length > 80) {
    throw invalid('A decision names the deciding person (1-80 characters).', [{ field, message: 'must be 1-80 characters' }]);
  }
  return person;
}

/** The submission result of a stored proposal. */
export function submissionResult(p: ProposalRecord, links: Links): ProposalSubmissionResult {
  const browserHref = links.reviewPage(p.reviewRef);
  return {
    v: 1,
    proposalRef: p.proposalRef,
    reviewRef: p.reviewRef,
    state: p.state,
    browserHref,
    conflicts: p.conflicts,
    requiredAction: p.state === 'proposed' || p.state === 'in-review' ? 'review-in-browser' : null,
    // The domain speaks no HTTP API: the review's metadata is reached by `reviewRef` (the API's
    // review operation), not by a link rendered here.
    supportPaths: [{ href: browserHref, label: 'Review this proposal in the browser (the signed-in person decides)' }],
  };
}

/** Build submission and decision over the engine's storage. */
export function createProposals(deps: EngineDeps, spaces: SpaceDirectory, onAccepted: (spaceRef: string) => void, idem: IdempotencyStore) {
  const { storage, clock, refs, sha256 } = deps;

  async function currentProposal(proposalRef: string): Promise<ProposalRecord> {
    const p = await storage.getRecord<ProposalRecord>(KnowledgeCollections.proposals, proposalRef);
    if (!p) throw new Error(`an idempotency record names the missing proposal ${proposalRef}`);
    return p.value;
  }

  async function submit(run: SubmissionRun, input: unknown, options: { idempotencyKey: string }): Promise<ProposalSubmissionResult> {
    if (!Patterns.jobId.test(run.jobId)) throw invalid('The job id is malformed.', [{ field: 'jobId', message: 'must be kjob_ and 48 lowercase hex' }]);
    if (!Patterns.idempotencyKey.test(options.idempotencyKey)) {
      throw invalid('The idempotency key must be 16-128 letters, digits, underscores or hyphens.', [{ field: 'idempotencyKey', message: 'must be 16-128 letters, digits, underscores or hyphens' }]);
    }
    const request = parseProposalRequest(input);
    if (request.spaceRef !== undefined && request.spaceRef !== run.spaceRef) throw notFound('The space');
    const owner = await spaces.visible(run.actor, run.spaceRef);
    if (!owner) throw notFound('The space');
    const scope = writeScope('proposal.submit', run.actor.accountId, options.idempotencyKey);
    const fingerprint = sha256(canonicalJson({ jobId: run.jobId, spaceRef: run.spaceRef, request }));
    const replay = async (record: IdempotencyRecord<{ proposalRef: string }>) => submissionResult(await currentProposal(record.result.proposalRef), deps.links);
    return idem.run(scope, fingerprint, () => spaces.serialize(run.spaceRef, async () => {
      const now = clock.now();
      const conflicts = await findConflicts(deps, run.spaceRef, request);
      const proposal: ProposalRecord = {
        v: 1,
        proposalRef: refs.proposalRef(),
        reviewRef: refs.reviewRef(),
        spaceRef: run.spaceRef,
        accountId: owner.accountId,
        jobId: run.jobId,
        credentialRef: run.actor.credentialRef,
        state: 'proposed',
        request,
        conflicts,
        createdAt: now,
        updatedAt: now,
        decidedAt: null,
        history: [{ decision: 'submit', state: 'proposed', person: null, note: null, at: now }],
        accepted: null,
      };
      const ops: BatchOp[] = [
        { kind: 'record.put', collection: KnowledgeCollections.proposals, key: proposal.proposalRef, value: proposal, expectedRevision: null },
        { kind: 'record.put', collection: KnowledgeCollections.reviews, key: proposal.reviewRef, value: { proposalRef: proposal.proposalRef }, expectedRevision: null },
        idem.recordOp(scope, { fingerprint, receiptRef: newReceiptRef(deps.ids), createdAt: now, result: { proposalRef: proposal.proposalRef } }),
      ];
      if (!(await storage.getRecord(KnowledgeCollections.spaces, run.spaceRef))) {
        const space: SpaceRecord = {
          v: 1, spaceRef: run.spaceRef, accountId: owner.accountId, documentRef: owner.documentRef,
          graphRevision: genesisRevision(sha256, run.spaceRef), recordCount: 0, publication: null, createdAt: now, updatedAt: now,
        };
        ops.push({ kind: 'record.put', collection: KnowledgeCollections.spaces, key: run.spaceRef, value: space, expectedRevision: null });
        ops.push({ kind: 'record.put', collection: KnowledgeCollections.revisions, key: `${run.spaceRef}/${space.graphRevision}`, value: { recordCount: 0, at: now }, expectedRevision: null });
      }
      try {
        await storage.commit(ops);
      } catch (e) {
        if (!isStorageConflict(e)) throw e;
        throw new ServiceError('CONFLICT', 'The space changed while the proposal was stored; nothing was written. Retry with the same key.', { cause: e, retryable: true });
      }
      return submissionResult(proposal, deps.links);
    }), replay);
  }

  /** A decision without a key: applied as it comes (a repeat is refused by the state machine). */
  function decide(reviewRef: string, input: DecisionInput): Promise<ProposalRecord> {
    return applyDecision(reviewRef, input, null);
  }

  /**
   * A decision under an idempotency key (the operator's `Idempotency-Key`): an exact repeat replays
   * the applied decision with the proposal as it is now instead of answering 409.
   */
  async function decideOnce(reviewRef: string, input: DecisionInput, idempotencyKey: string): Promise<DecisionOutcome> {
    const scope = writeScope('review.decide', OPERATOR_KEY_OWNER, requireIdempotencyKey(idempotencyKey));
    const fingerprint = sha256(canonicalJson({ reviewRef, decision: input.decision, person: input.person, note: input.note ?? null }));
    const receiptRef = newReceiptRef(deps.ids);
    return idem.run(
      scope,
      fingerprint,
      async () => {
        const proposal = await applyDecision(reviewRef, input, (p, now) => idem.recordOp(scope, { fingerprint, receiptRef, createdAt: now, result: { proposalRef: p.proposalRef } }));
        return { proposal, receipt: createdReceipt(receiptRef) };
      },
      async (record: IdempotencyRecord<{ proposalRef: string }>) => ({ proposal: await currentProposal(record.result.proposalRef), receipt: replayedReceipt(record) }),
    );
  }

  async function applyDecision(reviewRef: string, input: DecisionInput, recordOp: ((p: ProposalRecord, now: number) => BatchOp) | null): Promise<ProposalRecord> {
    const person = checkPerson(input.person);
    const note = input.note ?? null;
    if (note !== null && (typeof note !== 'string' || note.length > 1024)) throw invalid('The note must be at most 1024 characters.', [{ field: 'note', message: 'must be at most 1024 characters' }]);
    if (!Patterns.reviewRef.test(reviewRef)) throw notFound('The review');
    const review = await storage.getRecord<{ proposalRef: string }>(KnowledgeCollections.reviews, reviewRef);
    if (!review) throw notFound('The review');
    const first = await storage.getRecord<ProposalRecord>(KnowledgeCollections.proposals, review.value.proposalRef);
    if (!first) throw notFound('The proposal');
    return spaces.serialize(first.value.spaceRef, async () => {
      const stored = (await storage.getRecord<ProposalRecord>(KnowledgeCollections.proposals, review.value.proposalRef))!;
      const p = stored.value;
      const state = transitionProposal(p.state, input.decision);
      const now = Math.max(clock.now(), p.updatedAt);
      const next: ProposalRecord = {
        ...p,
        state,
        updatedAt: now,
        decidedAt: state === 'in-review' ? null : now,
        history: [...p.history, { decision: input.decision, state, person, note, at: now }],
      };
      const ops: BatchOp[] = [];
      if (state === 'accepted') {
        const spaceRec = await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, p.spaceRef);
        if (!spaceRec) throw new Error(`proposal ${p.proposalRef} names a space without a head`);
        const space = spaceRec.value;
        const graph = acceptedRecords(p, { refs, ids: deps.ids, now, firstOrdinal: space.recordCount + 1, person, note });
        const graphRevision = nextRevision(sha256, space.graphRevision, graph.records);
        const recordCount = space.recordCount + graph.records.length;
        next.accepted = { graphRevision, entityIds: graph.entityIds, inquiryIds: graph.inquiryIds };
        for (const r of graph.records) {
          ops.push({ kind: 'record.put', collection: KnowledgeCollections.graph, key: `${p.spaceRef}/${r.id}`, value: r, expectedRevision: null, index: { partition: p.spaceRef, sortKey: ordinalKey(r.ordinal) } });
        }
        ops.push({ kind: 'record.put', collection: KnowledgeCollections.revisions, key: `${p.spaceRef}/${graphRevision}`, value: { recordCount, at: now }, expectedRevision: null });
        ops.push({ kind: 'record.put', collection: KnowledgeCollections.spaces, key: p.spaceRef, value: { ...space, graphRevision, recordCount, updatedAt: now }, expectedRevision: spaceRec.revision });
        ops.push(...(await lookupOps(deps, p.spaceRef, graph.records)));
      }
      ops.push({ kind: 'record.put', collection: KnowledgeCollections.proposals, key: p.proposalRef, value: next, expectedRevision: stored.revision });
      if (recordOp) ops.push(recordOp(p, now));
      try {
        await storage.commit(ops);
      } catch (e) {
        if (!isStorageConflict(e)) throw e;
        throw new ServiceError('CONFLICT', 'The proposal or its space changed at the same time (another process); nothing was written. Read the review again and retry.', { cause: e, requiredAction: 'refresh-resource', retryable: true });
      }
      if (state === 'accepted') onAccepted(p.spaceRef);
      return next;
    });
  }

  return { submit, decide, decideOnce };
}
