/**
 * Builders for the jobs tests: engines over (port-completed) storage with a runner, a valid spec,
 * and a scripted runner whose steps a test releases one by one.
 * @module
 */
import { manualClock, type ManualClock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { createEngine, type Engine } from '../engine.ts';
import { seededIds } from '../ids.ts';
import type { Storage } from '../ports.ts';
import type { ResearchRunContext, ResearchRunner } from './runner.ts';
import type { ResearchJob } from './schemas.ts';

/** A valid ResearchReportSpec body (new document unless a documentRef is given). */
export function specBody(overrides: Record<string, unknown> = {}, documentRef?: string): Record<string, unknown> {
  return {
    v: 1,
    question: 'How do CRDTs keep concurrent edits convergent?',
    profile: 'focused',
    visibilityIntent: 'private',
    deliverable: { kind: 'report', form: 'question-answer', language: 'en' },
    spaceRef: documentRef ? { kind: 'document', documentRef } : { kind: 'new-document', title: 'CRDT research' },
    ...overrides,
  };
}

/** Options of the engines {@link engineMaker} builds. */
export interface JobsEngineOptions {
  runner?: ResearchRunner;
  storage?: Storage;
  seed?: number;
  clock?: ManualClock;
}

/** The storage adapters every jobs suite runs on: a name and a factory. */
export type AdapterList = readonly (readonly [string, () => Storage | Promise<Storage>])[];

/**
 * A builder of engines whose clock tests move, over `makeStorage()` unless a storage is given.
 * @remarks Test files pass the adapter (src/ must not import adapters/, test files may).
 */
export function engineMaker(makeStorage: () => Storage | Promise<Storage>) {
  return async (options: JobsEngineOptions = {}): Promise<Engine & { clock: ManualClock }> => {
    const clock = options.clock ?? manualClock();
    const engine = createEngine({
      storage: options.storage ?? (await makeStorage()),
      ids: seededIds(options.seed ?? 7),
      clock,
      ...(options.runner ? { runner: options.runner } : {}),
    });
    return Object.assign(engine, { clock });
  };
}

/** An account-wide actor with its own credential. */
export function actorOf(credential = 1, accountId = 'alice'): Actor {
  return { accountId, credentialRef: `scred_${credential.toString(16).padStart(24, '0')}`, documentRef: null };
}

/** A step of a scripted run. */
export type Step = (ctx: ResearchRunContext) => Promise<unknown>;

/**
 * A runner that performs `steps` for every job, each after the test releases it (`release()` lets
 * the next step go; `auto` lets all go). It remembers each run's context.
 */
export class ScriptedRunner implements ResearchRunner {
  readonly contexts = new Map<string, ResearchRunContext>();
  readonly started: string[] = [];
  readonly errors: unknown[] = [];
  private gates: (() => void)[] = [];
  private credits = 0;

  constructor(
    private readonly steps: Step[],
    private readonly auto = false,
  ) {}

  /** Let the next `n` steps (of any run) proceed. */
  release(n = 1): void {
    this.credits += n;
    while (this.credits > 0 && this.gates.length) {
      this.credits--;
      this.gates.shift()!();
    }
  }

  /** Resolves when released, or at once when the run's signal aborts (cancellation, shutdown). */
  private gate(signal: AbortSignal): Promise<void> {
    if (this.auto || signal.aborted) return Promise.resolve();
    if (this.credits > 0) {
      this.credits--;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const open = () => {
        this.gates = this.gates.filter((g) => g !== open);
        signal.removeEventListener('abort', open);
        resolve();
      };
      signal.addEventListener('abort', open);
      this.gates.push(open);
    });
  }

  async run(job: ResearchJob, ctx: ResearchRunContext): Promise<void> {
    this.started.push(job.jobId);
    this.contexts.set(job.jobId, ctx);
    for (const step of this.steps) {
      await this.gate(ctx.signal);
      if (ctx.signal.aborted) return;
      try {
        await step(ctx);
      } catch (e) {
        this.errors.push(e);
        throw e;
      }
    }
  }
}

/** A short report with a heading, a cited paragraph, a list and a table. */
export const SAMPLE_REPORT = {
  title: 'CRDT convergence',
  blocks: [
    { type: 'heading' as const, level: 1 as const, markdown: 'CRDT convergence' },
    { type: 'paragraph' as const, markdown: 'State-based CRDTs converge by merging with a join ([Shapiro et al.](https://hal.inria.fr/inria-00555588)).' },
    { type: 'bulletListItem' as const, markdown: 'Operations commute' },
    { type: 'table' as const, rows: [['Kind', 'Merge'], ['state', 'join'], ['op', 'apply']] },
  ],
};

/** The full happy path: plan, progress, stage the report, succeed. */
export const HAPPY_STEPS: Step[] = [
  (ctx) => ctx.setPhase('planning', 'Planning the search'),
  (ctx) => ctx.progress(40, 'Read 4 sources'),
  (ctx) => ctx.setPhase('synthesizing', 'Writing'),
  (ctx) => ctx.stageReport(SAMPLE_REPORT),
  (ctx) => ctx.succeed({ summary: 'Done' }),
];

/** Resolve after pending promise callbacks and I/O have run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Wait until `probe` holds, checking after each turn of the event loop (bounded). */
export async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await probe()) return;
    await settle();
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A step that holds the run until its signal aborts (cancellation or shutdown). */
export const untilAborted: Step = (ctx) =>
  new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
