/**
 * The proposal state machine: every (state, decision) pair either moves to the table's state or is
 * refused with CONFLICT; terminal states refuse everything.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isServiceError } from '../errors.ts';
import { PROPOSAL_STATES } from './proposal-schema.ts';
import { isTerminalProposalState, PROPOSAL_DECISIONS, transitionProposal } from './states.ts';

const EXPECTED: Record<string, Record<string, string | null>> = {
  proposed: { 'open-review': 'in-review', accept: 'accepted', reject: 'rejected', withdraw: 'withdrawn' },
  'in-review': { 'open-review': null, accept: 'accepted', reject: 'rejected', withdraw: 'withdrawn' },
  accepted: { 'open-review': null, accept: null, reject: null, withdraw: null },
  rejected: { 'open-review': null, accept: null, reject: null, withdraw: null },
  withdrawn: { 'open-review': null, accept: null, reject: null, withdraw: null },
};

for (const state of PROPOSAL_STATES) {
  for (const decision of PROPOSAL_DECISIONS) {
    const expected = EXPECTED[state]![decision]!;
    test(`${state} + ${decision} → ${expected ?? 'CONFLICT'}`, () => {
      if (expected !== null) {
        assert.is(transitionProposal(state, decision), expected);
        return;
      }
      try {
        transitionProposal(state, decision);
        assert.unreachable('the transition should be refused');
      } catch (e) {
        assert.ok(isServiceError(e) && e.code === 'CONFLICT' && e.requiredAction === 'refresh-resource');
      }
    });
  }
}

test('terminal states are exactly accepted, rejected and withdrawn', () => {
  assert.equal(PROPOSAL_STATES.filter(isTerminalProposalState), ['accepted', 'rejected', 'withdrawn']);
});

test.run();
