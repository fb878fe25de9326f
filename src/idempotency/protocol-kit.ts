/**
 * The write operations the protocol suite (protocol.test.ts) runs its cases against: each one knows
 * how to prepare its target, send itself under a key (as sent, with another body, or with another
 * revision), and count how many times it was applied.
 * @remarks Calls go through the engine's exports, so that one world can be two engines over one store
 * (two processes sharing a database) or an engine reopened over the same folder (a restart).
 * @module
 */
import { CREDENTIAL_COLLECTION } from '../auth/credentials.ts';
import type { Actor } from '../actor.ts';
import type { Engine } from '../engine.ts';
import { specBody } from '../jobs/jobs-kit.ts';
import { KnowledgeCollections } from '../knowledge/records.ts';
import { LibraryCollections } from '../library/records.ts';
import type { WriteReceipt } from './idempotency.ts';

/** How a send differs from the first one under its key. */
export type Variant = 'same' | 'changed-body' | 'changed-revision';

/** What a write answered, reduced to what the protocol promises. */
export interface Outcome {
  /** The id of what the write made or changed. */
  id: string;
  /** Null only where the operation's answer has no receipt (proposal submission: the contract's result has none). */
  receipt: WriteReceipt | null;
  /** The resource as the answer shows it (a revision, a state …), compared with {@link Target.current}. */
  resource: unknown;
}

/** One prepared target of a write. */
export interface Target {
  send(engine: Engine, key: string, variant?: Variant): Promise<Outcome>;
  /** How many times the write was applied to this target. */
  applied(engine: Engine): Promise<number>;
  /** The resource as it is now, in the form of {@link Outcome.resource}. */
  current(engine: Engine, outcome: Outcome): Promise<unknown>;
}

/** A write operation of the suite. */
export interface WriteCase {
  name: string;
  /** Whether the write takes a revision (a precondition that is part of "the same request"). */
  takesRevision: boolean;
  prepare(engine: Engine): Promise<Target>;
}

/** The actor of every case: an account-wide credential of account `alice`. */
export const actor: Actor = { accountId: 'alice', credentialRef: `scred_${'0'.repeat(23)}1`, documentRef: null };

let counter = 0;
/** A key no other send of the suite uses. */
export function uniqueKey(prefix = 'protocol'): string {
  return `${prefix}-${String(++counter).padStart(12, '0')}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Another revision of the same grammar as `revision` (a different version number). */
function otherRevision(revision: string): string {
  return revision.replace(/\.\d+$/, (v) => `.${Number(v.slice(1)) + 7}`);
}

async function newDocument(engine: Engine) {
  const out = await engine.documents.create(actor, { idempotencyKey: uniqueKey('doc'), body: { v: 1, title: 'Target' } });
  return out.document;
}

/** A job's read once its launch has settled (the scripted runner holds the run: it stays non-terminal). */
async function settledJob(engine: Engine, jobId: string) {
  let last = await engine.jobs.read(actor, jobId);
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const read = await engine.jobs.read(actor, jobId);
    if (read.revision === last.revision) return read;
    last = read;
  }
  throw new Error(`job ${jobId} never settled`);
}

const libraryItem = async (engine: Engine, itemId: string) => {
  const got = await engine.library.execute(actor, { type: 'get', itemId });
  if (got.type !== 'get') throw new Error('unexpected answer');
  return got.item;
};

async function saved(engine: Engine, url: string) {
  const out = await engine.library.execute(actor, { type: 'save-link', url, idempotencyKey: uniqueKey('save') });
  await engine.library.idle();
  if (out.type !== 'save-link') throw new Error('unexpected answer');
  return libraryItem(engine, out.item.itemId); // after its capture settled
}

const libraryItems = async (engine: Engine) => {
  const page = await engine.library.execute(actor, { type: 'list', limit: 50 });
  if (page.type !== 'list') throw new Error('unexpected answer');
  return page.items;
};

/**
 * Every write operation of the engine, by its name in docs/idempotency.md.
 * @param sampleProposal a valid proposal request about `topic` (fixtures/knowledge-kit.ts; src/ kits do not import fixtures)
 */
export function writeCases(sampleProposal: (topic?: string) => unknown): readonly WriteCase[] {
  return [
  {
    name: 'document.create',
    takesRevision: false,
    async prepare() {
      const title = `Doc ${uniqueKey('title')}`;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.documents.create(actor, { idempotencyKey: key, body: { v: 1, title: variant === 'changed-body' ? `${title} (other)` : title } });
          return { id: out.document.documentRef, receipt: out.idempotency, resource: out.document.revision };
        },
        applied: async (engine) => (await engine.documents.list(actor, { limit: 50 })).items.filter((d) => d.title === title).length,
        current: async (engine, o) => (await engine.documents.head(actor, o.id)).revision,
      };
    },
  },
  {
    name: 'document.mutate',
    takesRevision: true,
    async prepare(engine) {
      const doc = await newDocument(engine);
      const mutation = (text: string) => ({ v: 1, intent: 'protocol suite', mutation: { kind: 'create', parentBlockId: null, beforeBlockId: null, blocks: [{ type: 'paragraph', markdown: text }] } });
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.documents.mutate(actor, doc.documentRef, {
            idempotencyKey: key,
            ifRevision: variant === 'changed-revision' ? otherRevision(doc.revision) : doc.revision,
            body: mutation(variant === 'changed-body' ? 'other' : 'first'),
          });
          return { id: out.receipt.operationRef, receipt: out.idempotency, resource: out.document.revision };
        },
        applied: async (engine) => (await engine.documents.head(actor, doc.documentRef)).version - 1,
        current: async (engine) => (await engine.documents.head(actor, doc.documentRef)).revision,
      };
    },
  },
  {
    name: 'research-job.start',
    takesRevision: false,
    async prepare() {
      const question = `What does ${uniqueKey('q')} mean?`;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.jobs.start(actor, { idempotencyKey: key, body: specBody({ question, ...(variant === 'changed-body' ? { profile: 'deep' } : {}) }) });
          return { id: out.job.jobId, receipt: out.receipt, resource: out.revision };
        },
        applied: async (engine) => {
          const page = await engine.jobs.list(actor, { limit: 50 });
          let n = 0;
          for (const item of page.items) if ((await engine.jobs.read(actor, item.jobId)).job.spec.question === question) n++;
          return n;
        },
        current: async (engine, o) => (await engine.jobs.read(actor, o.id)).revision,
      };
    },
  },
  {
    name: 'research-job.cancel',
    takesRevision: true,
    async prepare(engine) {
      const start = async () => (await engine.jobs.start(actor, { idempotencyKey: uniqueKey('start'), body: specBody({ question: `Cancel ${uniqueKey('q')}?` }) })).job.jobId;
      const [first, other] = [await start(), await start()];
      const { revision } = await settledJob(engine, first);
      await settledJob(engine, other);
      return {
        async send(engine, key, variant = 'same') {
          const jobId = variant === 'changed-body' ? other : first;
          const out = await engine.jobs.cancel(actor, jobId, { idempotencyKey: key, ifRevision: variant === 'changed-revision' ? `${revision}0` : revision, body: { v: 1 } });
          return { id: out.job.jobId, receipt: out.receipt, resource: out.revision };
        },
        applied: async (engine) => (await engine.jobs.events(actor, first, { limit: 100 })).items.filter((e) => e.kind === 'job.cancelled').length,
        current: async (engine, o) => (await engine.jobs.read(actor, o.id)).revision,
      };
    },
  },
  {
    name: 'proposal.submit',
    takesRevision: false,
    async prepare(engine) {
      const doc = await newDocument(engine);
      const run = { actor, jobId: `kjob_${'0'.repeat(47)}1`, spaceRef: doc.spaceRef };
      const count = async (e: Engine) => (await e.deps.storage.listRecords<{ spaceRef: string }>(KnowledgeCollections.proposals)).filter((r) => r.value.spaceRef === doc.spaceRef).length;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.knowledge.submitProposal(run, sampleProposal(variant === 'changed-body' ? 'Ada Lovelace' : 'Marie Curie'), { idempotencyKey: key });
          return { id: out.proposalRef, receipt: null, resource: out.state };
        },
        applied: count,
        current: async (engine, o) => (await engine.deps.storage.getRecord<{ state: string }>(KnowledgeCollections.proposals, o.id))!.value.state,
      };
    },
  },
  {
    name: 'library.save-link',
    takesRevision: false,
    async prepare() {
      const url = `https://example.org/${uniqueKey('page')}`;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.library.execute(actor, { type: 'save-link', url: variant === 'changed-body' ? `${url}-other` : url, idempotencyKey: key });
          if (out.type !== 'save-link') throw new Error('unexpected answer');
          await engine.library.idle();
          return { id: out.item.itemId, receipt: out.receipt ?? null, resource: out.item.revision };
        },
        applied: async (engine) => (await libraryItems(engine)).filter((i) => i.url === url).length,
        current: async (engine, o) => (await libraryItem(engine, o.id)).revision,
      };
    },
  },
  {
    name: 'library.create-note',
    takesRevision: false,
    async prepare(engine) {
      const source = await saved(engine, `https://example.org/${uniqueKey('noted')}`);
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.library.execute(actor, { type: 'create-note', sourceId: source.itemId, markdown: variant === 'changed-body' ? 'Other note' : 'A note', idempotencyKey: key });
          if (out.type !== 'create-note') throw new Error('unexpected answer');
          return { id: out.item.itemId, receipt: out.receipt ?? null, resource: out.item.revision };
        },
        applied: async (engine) => (await libraryItems(engine)).filter((i) => i.kind === 'note' && i.sourceId === source.itemId).length,
        current: async (engine, o) => (await libraryItem(engine, o.id)).revision,
      };
    },
  },
  {
    name: 'library.set-reading-state',
    takesRevision: true,
    async prepare(engine) {
      const source = await saved(engine, `https://example.org/${uniqueKey('read')}`);
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.library.execute(actor, {
            type: 'set-reading-state',
            sourceId: source.itemId,
            expectedRevision: variant === 'changed-revision' ? source.revision + 5 : source.revision,
            read: variant !== 'changed-body',
            archived: false,
            idempotencyKey: key,
          });
          if (out.type !== 'set-reading-state') throw new Error('unexpected answer');
          return { id: out.item.itemId, receipt: out.receipt ?? null, resource: out.item.revision };
        },
        applied: async (engine) => (await libraryItem(engine, source.itemId)).revision - source.revision,
        current: async (engine, o) => (await libraryItem(engine, o.id)).revision,
      };
    },
  },
  {
    name: 'library.prepare-upload',
    takesRevision: false,
    async prepare() {
      const fileName = `${uniqueKey('file')}.pdf`;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.library.execute(actor, { type: 'prepare-upload', fileName, contentType: 'application/pdf', byteLength: variant === 'changed-body' ? 2048 : 1024, idempotencyKey: key });
          if (out.type !== 'prepare-upload') throw new Error('unexpected answer');
          return { id: out.upload.uploadId, receipt: out.receipt ?? null, resource: out.upload.uploadId };
        },
        applied: async (engine) => (await engine.deps.storage.listRecords<{ fileName?: string }>(LibraryCollections.uploads)).filter((r) => r.value.fileName === fileName).length,
        current: async (_engine, o) => o.id,
      };
    },
  },
  {
    name: 'review.decide',
    takesRevision: false,
    async prepare(engine) {
      const doc = await newDocument(engine);
      const submitted = await engine.knowledge.submitProposal({ actor, jobId: `kjob_${'0'.repeat(47)}2`, spaceRef: doc.spaceRef }, sampleProposal(), { idempotencyKey: uniqueKey('submit') });
      const { reviewRef } = submitted;
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.operator.decideOnce(reviewRef, { decision: 'open-review', person: variant === 'changed-body' ? 'Someone Else' : 'Dana Reviewer' }, key);
          return { id: out.proposal.proposalRef, receipt: out.receipt, resource: out.proposal.updatedAt };
        },
        applied: async (engine) => (await engine.operator.proposalOfReview(reviewRef)).history.length - 1,
        current: async (engine) => (await engine.operator.proposalOfReview(reviewRef)).updatedAt,
      };
    },
  },
  {
    name: 'credential.create',
    takesRevision: false,
    async prepare() {
      const label = `Label ${uniqueKey('label')}`.slice(0, 60);
      return {
        async send(engine, key, variant = 'same') {
          const out = await engine.credentials.createOnce({ accountId: 'alice', label, scopes: variant === 'changed-body' ? ['document:write'] : ['document:read'] }, key);
          return { id: out.credential.credentialRef, receipt: out.receipt, resource: out.credential.label };
        },
        applied: async (engine) => (await engine.deps.storage.listRecords<{ label: string }>(CREDENTIAL_COLLECTION)).filter((r) => r.value.label === label).length,
        current: async (engine, o) => (await engine.credentials.get(o.id))!.label,
      };
    },
  },
];
}
