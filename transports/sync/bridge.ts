/**
 * The bridge of one open document: the editor Y.Doc people edit (BlockNote's `document-store`
 * fragment) kept in step with the document's API versions in both directions.
 * - API → editor: on every change notification of the document (`storage.subscribe(documentTopic)`,
 *   so a version written by another process arrives too) the new version is read and its change
 *   since the last one merged into the fragment as one Yjs update ({@link applyVersion}).
 * - editor → API: people's edits are committed as one API version (`commitEditorBlocks`, one
 *   operationRef each) once their typing pauses for `pauseMs`, and at least every `maxMs` while it
 *   goes on. A commit built on a stale revision (an agent wrote meanwhile) first merges that version
 *   into the fragment, then plans again from the merged fragment: nothing either side wrote is lost.
 * @module
 */
import * as Y from 'yjs';
import type { Actor } from '../../src/deps.ts';
import type { Engine } from '../../src/engine.ts';
import { isServiceError } from '../../src/errors.ts';
import { documentTopic } from '../../src/ports.ts';
import { EDITOR_FRAGMENT, isTrailingParagraph, readFragment, writeFragment, type EditorBlock } from '../../src/blocks/editor-fragment.ts';
import { applyVersion } from '../../src/blocks/editor-merge.ts';

/** Timers of the version rhythm; injectable for tests. */
export interface SyncTiming {
  /** A person's edits become a version once their typing pauses this long (ms); default 1000. */
  pauseMs: number;
  /** …and at least this often while typing goes on (ms); default 5000. */
  maxMs: number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

/** The default rhythm: 1 s pause, 5 s at most, on the global timers. */
export const defaultTiming: SyncTiming = {
  pauseMs: 1000,
  maxMs: 5000,
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
};

/** Origin of the bridge's own transactions on the editor doc (never a person's edit). */
export const BRIDGE_ORIGIN = Symbol('kw-sync-bridge');

/** How often a commit re-merges and retries at once after losing the race to another writer (then after a pause). */
const COMMIT_ATTEMPTS = 8;

/** A document's blocks, version and revision as the bridge last took them from the API. */
interface Base {
  blocks: EditorBlock[];
  ids: Set<string>;
  version: number;
  revision: string;
}

function idsOf(blocks: readonly EditorBlock[], out = new Set<string>()): Set<string> {
  for (const b of blocks) {
    out.add(b.id);
    idsOf(b.children, out);
  }
  return out;
}

/** The editor doc of one open document and its two-way sync with the API. */
export class DocumentBridge {
  readonly doc = new Y.Doc({ gc: true });
  readonly fragment: Y.XmlFragment = this.doc.getXmlFragment(EDITOR_FRAGMENT);
  private base: Base | null = null;
  private queue: Promise<void> = Promise.resolve();
  private dirty = false;
  private editor: Actor | null = null;
  private pauseTimer: unknown = null;
  private maxTimer: unknown = null;
  private unsubscribe: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    readonly documentRef: string,
    /** Reads versions: a trusted actor of the document's account. */
    private readonly reader: Actor,
    private readonly timing: SyncTiming,
    private readonly mintId: () => string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Load the current version into the fragment (plus the editor's trailing paragraph) and follow the document. */
  async open(): Promise<void> {
    // Subscribed first and read in the queue: a version committed while the first read runs is pulled after it.
    this.unsubscribe = this.engine.deps.storage.subscribe(documentTopic(this.documentRef), () => this.enqueue(() => this.pull()));
    const opened = this.queue.then(async () => {
      const base = await this.read();
      this.base = base;
      const trailing: EditorBlock = { id: this.mintId(), type: 'paragraph', props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' }, content: [], children: [] };
      this.doc.transact(() => writeFragment(this.fragment, [...base.blocks, trailing]), BRIDGE_ORIGIN);
    });
    this.queue = opened.catch(() => {});
    await opened;
  }

  /** The version the fragment reflects last (0 before {@link open}). */
  get version(): number {
    return this.base?.version ?? 0;
  }

  /** A person (`actor`) changed the fragment: (re)start the pause timer, and the max timer if idle. */
  edited(actor: Actor): void {
    if (this.closed) return;
    this.editor = actor;
    this.dirty = true;
    if (this.pauseTimer !== null) this.timing.clearTimer(this.pauseTimer);
    this.pauseTimer = this.timing.setTimer(() => this.due(), this.timing.pauseMs);
    this.maxTimer ??= this.timing.setTimer(() => this.due(), this.timing.maxMs);
  }

  /** Commit pending edits now (when the last person leaves) and wait for the queue. */
  flush(): Promise<void> {
    if (this.dirty) this.due();
    return this.queue;
  }

  /** Stop following the document (after {@link flush}). */
  close(): void {
    this.closed = true;
    this.clearTimers();
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.doc.destroy();
  }

  private clearTimers(): void {
    if (this.pauseTimer !== null) this.timing.clearTimer(this.pauseTimer);
    if (this.maxTimer !== null) this.timing.clearTimer(this.maxTimer);
    this.pauseTimer = this.maxTimer = null;
  }

  private due(): void {
    this.clearTimers();
    this.enqueue(() => this.commit());
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((error) => this.onError(error));
  }

  private async read(): Promise<Base> {
    const read = await this.engine.documents.read(this.reader, this.documentRef, 'rich-json');
    if (read.format !== 'rich-json') throw new Error('rich-json read answered another format');
    const blocks = (JSON.parse(read.document.documentJson) as { blocks: EditorBlock[] }).blocks;
    return { blocks, ids: idsOf(blocks), version: read.version, revision: read.revision };
  }

  /** Merge the API's newest version into the fragment, if it is newer than the one it reflects. */
  private async pull(): Promise<void> {
    if (this.closed || this.base === null) return;
    const next = await this.read();
    const base = this.base;
    if (this.closed || next.version <= base.version) return;
    this.doc.transact(() => applyVersion(this.fragment, base.blocks, next.blocks), BRIDGE_ORIGIN);
    this.base = next;
  }

  /** The fragment's blocks as API blocks: without the editor's empty trailing paragraph. */
  private editorBlocks(base: Base): EditorBlock[] {
    const blocks = readFragment(this.fragment);
    const last = blocks[blocks.length - 1];
    if (last !== undefined && isTrailingParagraph(last, (id) => base.ids.has(id))) blocks.pop();
    return blocks;
  }

  /** Commit the fragment as the next API version (nothing when it equals the current one). */
  private async commit(): Promise<void> {
    if (this.closed || !this.dirty || this.base === null || this.editor === null) return;
    this.dirty = false;
    const actor = this.editor;
    for (let attempt = 1; ; attempt++) {
      const base = this.base;
      try {
        const outcome = await this.engine.documents.commitEditorBlocks(actor, this.documentRef, {
          idempotencyKey: `sync_${this.engine.deps.ids.hex(32)}`,
          ifRevision: base.revision,
          editorBlocks: this.editorBlocks(base),
        });
        if (outcome !== null && outcome.document.version > (this.base?.version ?? 0)) {
          const blocks = (JSON.parse(outcome.document.documentJson) as { blocks: EditorBlock[] }).blocks;
          this.base = { blocks, ids: idsOf(blocks), version: outcome.document.version, revision: outcome.document.revision };
        }
        return;
      } catch (error) {
        const stale = isServiceError(error) && error.code === 'PRECONDITION_FAILED';
        if (!stale || this.closed) throw error;
        await this.pull();
        if (attempt >= COMMIT_ATTEMPTS) {
          // Agents keep winning the race: try again after another pause (the edits stay pending).
          this.edited(actor);
          return;
        }
      }
    }
  }
}
