import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isServiceError } from '../errors.ts';
import { EVENT_KIND_OF, JOB_PHASES, JOB_STATES, JOB_TRIGGERS, TERMINAL_EVENT_KINDS, TRANSITIONS, WORK_PHASES, isTerminal, transition, type JobTransitionEvent, type JobTrigger } from './states.ts';

/** The pairs the contract and our design allow, written out independently of the table. */
const ALLOWED: Record<string, string> = {
  'queued:start': 'running',
  'queued:fail': 'failed',
  'queued:cancel': 'cancelled',
  'running:phase': 'running',
  'running:progress': 'running',
  'running:wait': 'waiting',
  'running:artifact': 'running',
  'running:succeed': 'succeeded',
  'running:fail': 'failed',
  'running:cancel': 'cancelled',
  'waiting:phase': 'running',
  'waiting:progress': 'waiting',
  'waiting:wait': 'waiting',
  'waiting:artifact': 'waiting',
  'waiting:fail': 'failed',
  'waiting:cancel': 'cancelled',
};

const eventOf = (type: JobTrigger): JobTransitionEvent => (type === 'start' || type === 'phase' ? { type, phase: 'retrieving' } : { type });

test('every (state, trigger) pair: the listed ones lead where the table says, every other one is refused with CONFLICT', () => {
  let checked = 0;
  for (const state of JOB_STATES) {
    for (const trigger of JOB_TRIGGERS) {
      const expected = ALLOWED[`${state}:${trigger}`];
      const phase = state === 'queued' ? 'queued' : state === 'succeeded' ? 'complete' : state === 'cancelled' ? 'cancelled' : 'planning';
      if (expected) {
        const out = transition({ state, phase }, eventOf(trigger));
        assert.is(out.state, expected, `${state} + ${trigger}`);
        assert.is(out.kind, EVENT_KIND_OF[trigger]);
      } else {
        try {
          transition({ state, phase }, eventOf(trigger));
          assert.unreachable(`${state} + ${trigger} must be refused`);
        } catch (e) {
          assert.ok(isServiceError(e) && e.code === 'CONFLICT', `${state} + ${trigger} gives CONFLICT`);
        }
      }
      checked++;
    }
  }
  assert.is(checked, JOB_STATES.length * JOB_TRIGGERS.length);
  assert.is(Object.values(TRANSITIONS).reduce((n, row) => n + Object.keys(row).length, 0), Object.keys(ALLOWED).length, 'the table lists nothing else');
});

test('terminal states accept nothing, and exactly the three terminal kinds end a history', () => {
  for (const state of JOB_STATES) assert.is(isTerminal(state), ['succeeded', 'failed', 'cancelled'].includes(state));
  assert.equal([...TERMINAL_EVENT_KINDS].sort(), ['job.cancelled', 'job.failed', 'job.succeeded']);
  for (const trigger of JOB_TRIGGERS) {
    const kind = EVENT_KIND_OF[trigger];
    assert.is(TERMINAL_EVENT_KINDS.has(kind), ['succeed', 'fail', 'cancel'].includes(trigger), trigger);
  }
});

test('phases: start and phase enter the named work phase, succeed completes, cancel cancels, fail keeps the phase', () => {
  assert.is(transition({ state: 'queued', phase: 'queued' }, { type: 'start', phase: 'planning' }).phase, 'planning');
  assert.is(transition({ state: 'waiting', phase: 'retrieving' }, { type: 'phase', phase: 'extracting' }).phase, 'extracting');
  assert.is(transition({ state: 'running', phase: 'synthesizing' }, { type: 'succeed' }).phase, 'complete');
  assert.is(transition({ state: 'running', phase: 'synthesizing' }, { type: 'cancel' }).phase, 'cancelled');
  assert.is(transition({ state: 'queued', phase: 'queued' }, { type: 'cancel' }).phase, 'cancelled');
  assert.is(transition({ state: 'running', phase: 'extracting' }, { type: 'fail' }).phase, 'extracting');
  assert.is(transition({ state: 'running', phase: 'extracting' }, { type: 'progress' }).phase, 'extracting');
  for (const phase of JOB_PHASES) {
    const isWork = (WORK_PHASES as readonly string[]).includes(phase);
    try {
      transition({ state: 'running', phase: 'planning' }, { type: 'phase', phase: phase as (typeof WORK_PHASES)[number] });
      assert.ok(isWork, `${phase} is accepted only as a work phase`);
    } catch (e) {
      assert.ok(!isWork && isServiceError(e) && e.code === 'INVALID_REQUEST', `${phase} refused`);
    }
  }
});

test.run();
