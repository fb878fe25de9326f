/**
 * The proposal state machine as data: which decision moves a proposal from which state to which.
 * @remarks A submission creates the proposal in `proposed` together with its review. A person opens
 * the review (`in-review`) and accepts or rejects it; the submitting side may withdraw it while it is
 * undecided. `accepted`, `rejected` and `withdrawn` are terminal. Accepting writes the graph records;
 * nothing else does.
 * @module
 */
import { ServiceError } from '../errors.ts';
import type { ProposalState } from './proposal-schema.ts';

/** What a person can decide about a proposal. */
export const PROPOSAL_DECISIONS = ['open-review', 'accept', 'reject', 'withdraw'] as const;
/** A decision about a proposal. */
export type ProposalDecision = (typeof PROPOSAL_DECISIONS)[number];

/** The transition table: `TRANSITIONS[state][decision]` is the next state; absent means refused. */
export const PROPOSAL_TRANSITIONS: Readonly<Record<ProposalState, Readonly<Partial<Record<ProposalDecision, ProposalState>>>>> = Object.freeze({
  proposed: { 'open-review': 'in-review', accept: 'accepted', reject: 'rejected', withdraw: 'withdrawn' },
  'in-review': { accept: 'accepted', reject: 'rejected', withdraw: 'withdrawn' },
  accepted: {},
  rejected: {},
  withdrawn: {},
});

/** True for a state no decision leaves. */
export function isTerminalProposalState(state: ProposalState): boolean {
  return Object.keys(PROPOSAL_TRANSITIONS[state]).length === 0;
}

/**
 * The state a decision leads to.
 * @throws CONFLICT (requiredAction refresh-resource) when the table has no such transition.
 */
export function transitionProposal(state: ProposalState, decision: ProposalDecision): ProposalState {
  const next = PROPOSAL_TRANSITIONS[state][decision];
  if (next === undefined) {
    throw new ServiceError('CONFLICT', `A proposal in state ${state} cannot be given the decision ${decision}${isTerminalProposalState(state) ? ' (the state is final)' : ''}.`, {
      requiredAction: 'refresh-resource',
    });
  }
  return next;
}
