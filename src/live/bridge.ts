/**
 * The bridge of one open document: the editor Y.Doc people edit (BlockNote's `document-store`
 * fragment) kept in step with the document's API versions in both directions.
 * - API → editor: on every change notification of the document (`storage.subscribe(documentTopic)`,
 *   so a version written by another process arrives too) the new version is read and its change
 *   since the last one merged into the fragment as one Yjs update ({@link applyVersion}).
 * - editor → API: each person's edits are committed as an API version of their own
 *   (`commitEditorBlocks` as that person, one operationRef each) once *their* typing pauses for
 *   `pauseMs`, and at least every `maxMs` while it goes on. Which blocks a person changed is read
 *   off the Yjs transactions their updates make; while others have edits pending too, the version
 *   holds only this person's blocks ({@link ownBlocks}), else the whole fragment. A commit built on
 *   a stale revision (an agent wrote meanwhile) first merges that version into the fragment, then
 *   plans again from the merged fragment: nothing either side wrote is lost.
 * @module
 */
import * as Y from 'yjs';
import type { Actor } from '../actor.ts';
import type { DocumentsService } from '../documents/types.ts';
import { isServiceError, ServiceError } from '../errors.ts';
import { MAX_IMPORT_DEPTH } from '../blocks/blocknote-import.ts';
import { EDITOR_FRAGMENT, isTrailingParagraph, readFragment, writeFragment, type EditorBlock } from '../blocks/editor-fragment.ts';
import { applyVersion } from '../blocks/editor-merge.ts';
import { ownBlocks } from './attribution.ts';

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
const BRIDGE_ORIGIN = Symbol('kw-sync-bridge');

/** How often a commit re-merges and retries at once after losing the race to another writer (then after a pause). */
const COMMIT_ATTEMPTS = 8;

/** A document's blocks, version and revision as the bridge last took them from the API. */
interface Base {
  blocks: EditorBlock[];
  ids: Set<string>;
  /** Levels of nesting (1: root blocks only; 0: no block). */
  depth: number;
  version: number;
  revision: string;
}

/** One person's edits not committed yet, and their rhythm's timers. */
interface Pending {
  actor: Actor;
  /** Blocks whose content or place they changed. */
  touched: Set<string>;
  /** Blocks they deleted (with what was inside). */
  deleted: Set<string>;
  /** When they last edited, in the room's order of edits. */
  seq: number;
  pauseTimer: unknown;
  maxTimer: unknown;
}

/** Who holds an edit: a credential, or a signed-in person's account. */
const holderOf = (actor: Actor) => actor.credentialRef ?? `person:${actor.accountId}`;

const isContainer = (t: unknown): t is Y.XmlElement => t instanceof Y.XmlElement && t.nodeName === 'blockContainer';

/** The ids of a block tree and how deeply it nests (without recursion: the API allows deep trees). */
function shapeOf(blocks: readonly EditorBlock[]): { ids: Set<string>; depth: number } {
  const ids = new Set<string>();
  let depth = 0;
  const stack: [readonly EditorBlock[], number][] = [[blocks, 1]];
  while (stack.length > 0) {
    const [list, level] = stack.pop()!;
    for (const b of list) {
      ids.add(b.id);
      if (level > depth) depth = level;
      if (b.children.length) stack.push([b.children, level + 1]);
    }
  }
  return { ids, depth };
}

/** Nesting beyond what a person's edits could be committed at (the editor import's bound). */
const tooDeep = (depth: number) =>
  new ServiceError('CONFLICT', `This document nests blocks ${depth} levels deep; the live editor holds at most ${MAX_IMPORT_DEPTH}. Edit it through the API.`);

/**
 * One open document's live-editing session (what `engine.live.open` answers): the editor Y.Doc
 * people edit, kept in step with the document's versions, each person's edits committed as them.
 */
export interface LiveSession {
  readonly documentRef: string;
  /** The editor doc; a person's update is applied with a transaction origin {@link LiveSession.attribute} names. */
  readonly doc: Y.Doc;
  /** The doc's `document-store` fragment (BlockNote's collaboration fragment). */
  readonly fragment: Y.XmlFragment;
  /** The version the fragment reflects last. */
  readonly version: number;
  /** Name who makes a transaction (its origin): a person's actor, or null (not a person's edit). */
  attribute(actorOf: (origin: unknown) => Actor | null): void;
  /** Be told when the copy can no longer be kept in step with the API (then every editor starts over). */
  whenBroken(onBroken: (error: Error) => void): void;
  /** Commit everyone's pending edits now, in the order they edited, and wait for them. */
  flush(): Promise<void>;
  /** Stop following the document (after {@link LiveSession.flush}). */
  close(): void;
}

/** The editor doc of one open document and its two-way sync with the API. */
export class DocumentBridge implements LiveSession {
  readonly doc = new Y.Doc({ gc: true });
  readonly fragment: Y.XmlFragment = this.doc.getXmlFragment(EDITOR_FRAGMENT);
  private base: Base | null = null;
  private queue: Promise<void> = Promise.resolve();
  /** Pending edits by holder. */
  private readonly pending = new Map<string, Pending>();
  /**
   * Edits whose commit failed for good (say, a paste past the document's size limit), by holder:
   * kept out of everyone else's versions, and tried again with the holder's next edit.
   */
  private readonly failed = new Map<string, { actor: Actor; touched: Set<string>; deleted: Set<string> }>();
  private seq = 0;
  /** The block id of every container the fragment has held (a deleted one's id can no longer be read from it). */
  private readonly containerIds = new WeakMap<Y.XmlElement, string>();
  /** Who made a transaction (its origin): a person's actor, or null (the bridge, an unknown origin). */
  private actorOf: (origin: unknown) => Actor | null = () => null;
  /** Told when the room's copy can no longer be kept in step (then every peer starts over). */
  private onBroken: (error: Error) => void = () => {};
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  /** The grant check before each commit ({@link beforeCommit}). */
  private checkCommit: (actor: Actor) => Promise<void> = async () => {};

  constructor(
    private readonly documents: Pick<DocumentsService, 'watch' | 'read' | 'commitEditorBlocks'>,
    readonly documentRef: string,
    /** Reads versions: a trusted actor of the document's account. */
    private readonly reader: Actor,
    private readonly timing: SyncTiming,
    /** Mints new blocks' ids. */
    private readonly mintId: () => string,
    private readonly onError: (error: unknown) => void,
    /** Mints each commit's idempotency key (its random part). */
    private readonly mintKey: () => string,
  ) {}

  /** Load the current version into the fragment (plus the editor's trailing paragraph) and follow the document. */
  async open(): Promise<void> {
    // Subscribed first and read in the queue: a version committed while the first read runs is pulled after it.
    this.unsubscribe = this.documents.watch(this.documentRef, () => this.enqueue(() => this.pull()));
    const opened = this.queue.then(async () => {
      const base = await this.read();
      if (base.depth > MAX_IMPORT_DEPTH) throw tooDeep(base.depth);
      this.base = base;
      const trailing: EditorBlock = { id: this.mintId(), type: 'paragraph', props: { backgroundColor: 'default', textColor: 'default', textAlignment: 'left' }, content: [], children: [] };
      this.doc.transact(() => writeFragment(this.fragment, [...base.blocks, trailing]), BRIDGE_ORIGIN);
      for (const group of this.fragment.toArray()) if (group instanceof Y.XmlElement) this.register(group, null);
    });
    this.queue = opened.catch(() => {});
    await opened;
    this.fragment.observeDeep((events, transaction) => this.observe(events, transaction));
  }

  /** Name who makes a transaction (the room: the peer whose update it applies). */
  attribute(actorOf: (origin: unknown) => Actor | null): void {
    this.actorOf = actorOf;
  }

  /**
   * Re-check the grant of a person before each commit of their edits (it throws a ServiceError to
   * refuse it: a revoked or expired token, a spent request budget).
   */
  beforeCommit(check: (actor: Actor) => Promise<void>): void {
    this.checkCommit = check;
  }

  /** Be told when the room's copy can no longer be kept in step with the API (then every peer starts over). */
  whenBroken(onBroken: (error: Error) => void): void {
    this.onBroken = onBroken;
  }

  /**
   * Containers added by a transaction, their ids remembered; with `touched`, each noted as changed.
   * @returns how many containers deep the deepest of them sits (a peer may send any nesting: no recursion).
   */
  private register(type: Y.XmlElement, touched: Set<string> | null): number {
    let above = 0;
    for (let t = type.parent; t instanceof Y.XmlElement; t = t.parent) if (isContainer(t)) above++;
    let deepest = above;
    const stack: [Y.XmlElement, number][] = [[type, above]];
    while (stack.length > 0) {
      const [el, level] = stack.pop()!;
      let inner = level;
      if (isContainer(el)) {
        inner = level + 1;
        if (inner > deepest) deepest = inner;
        const id = el.getAttribute('id');
        if (typeof id === 'string') {
          this.containerIds.set(el, id);
          touched?.add(id);
        }
      }
      for (const child of el.toArray()) if (child instanceof Y.XmlElement) stack.push([child, inner]);
    }
    return deepest;
  }

  /** Read off a transaction the blocks it changed and deleted, and note them for the person who made it. */
  private observe(events: Y.YEvent<any>[], transaction: Y.Transaction): void {
    const actor = transaction.origin === BRIDGE_ORIGIN ? null : this.actorOf(transaction.origin);
    const touched = actor === null ? null : new Set<string>();
    const deleted = new Set<string>();
    let deepest = 0;
    for (const event of events) {
      for (const item of event.changes.added) {
        const type = (item.content as { type?: unknown }).type;
        if (type instanceof Y.XmlElement) deepest = Math.max(deepest, this.register(type, touched));
      }
      if (touched === null) continue;
      for (const item of event.changes.deleted) {
        const type = (item.content as { type?: unknown }).type;
        const id = type instanceof Y.XmlElement ? this.containerIds.get(type) : undefined;
        if (id !== undefined) deleted.add(id);
      }
      // The block whose own content (text, props) the event changed; a blockGroup's own change is its children's.
      const target = event.target as Y.AbstractType<any>;
      if (target instanceof Y.XmlElement && target.nodeName === 'blockGroup') continue;
      for (let t: Y.AbstractType<any> | null = target; t !== null; t = t.parent) {
        if (isContainer(t)) {
          const id = this.containerIds.get(t) ?? t.getAttribute('id');
          if (typeof id === 'string') touched.add(id);
          break;
        }
      }
    }
    if (deepest > MAX_IMPORT_DEPTH) {
      // Nothing of it could ever be committed, and the editors' own code would choke on it.
      this.onBroken(new Error(`A peer nested blocks ${deepest} levels deep in the live copy, past the ${MAX_IMPORT_DEPTH} the editor holds; the room opens again from the last version.`));
      return;
    }
    if (actor !== null && touched !== null && (touched.size > 0 || deleted.size > 0)) this.edited(actor, touched, deleted);
  }

  /** The version the fragment reflects last (0 before {@link open}). */
  get version(): number {
    return this.base?.version ?? 0;
  }

  /**
   * A person (`actor`) changed the fragment (the blocks `touched`, the blocks `deleted`): (re)start
   * their pause timer, and their max timer if they were idle.
   */
  edited(actor: Actor, touched: Iterable<string> = [], deleted: Iterable<string> = []): void {
    if (this.closed) return;
    const holder = holderOf(actor);
    let p = this.pending.get(holder);
    if (p === undefined) {
      p = { actor, touched: new Set(), deleted: new Set(), seq: 0, pauseTimer: null, maxTimer: null };
      this.pending.set(holder, p);
    }
    p.actor = actor;
    p.seq = ++this.seq;
    const earlier = this.failed.get(holder);
    if (earlier !== undefined) {
      this.failed.delete(holder);
      for (const id of earlier.touched) p.touched.add(id);
      for (const id of earlier.deleted) p.deleted.add(id);
    }
    for (const id of touched) p.touched.add(id);
    for (const id of deleted) p.deleted.add(id);
    if (p.pauseTimer !== null) this.timing.clearTimer(p.pauseTimer);
    p.pauseTimer = this.timing.setTimer(() => this.due(holder), this.timing.pauseMs);
    p.maxTimer ??= this.timing.setTimer(() => this.due(holder), this.timing.maxMs);
  }

  /**
   * Commit everyone's pending edits now (when the last person leaves), in the order they edited,
   * and wait for the queue; edits whose commit was refused are tried once more.
   */
  flush(): Promise<void> {
    for (const [, f] of [...this.failed]) this.edited(f.actor);
    for (const [holder] of [...this.pending].sort((a, b) => a[1].seq - b[1].seq)) this.due(holder);
    return this.queue;
  }

  /** Stop following the document (after {@link flush}). */
  close(): void {
    this.closed = true;
    for (const p of this.pending.values()) this.clearTimers(p);
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.doc.destroy();
  }

  private clearTimers(p: Pending): void {
    if (p.pauseTimer !== null) this.timing.clearTimer(p.pauseTimer);
    if (p.maxTimer !== null) this.timing.clearTimer(p.maxTimer);
    p.pauseTimer = p.maxTimer = null;
  }

  private due(holder: string): void {
    const p = this.pending.get(holder);
    if (p === undefined) return;
    this.clearTimers(p);
    this.enqueue(() => this.commit(holder));
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((error) => this.onError(error));
  }

  private async read(): Promise<Base> {
    const read = await this.documents.read(this.reader, this.documentRef, 'rich-json');
    if (read.format !== 'rich-json') throw new Error('rich-json read answered another format');
    const blocks = (JSON.parse(read.document.documentJson) as { blocks: EditorBlock[] }).blocks;
    return { blocks, ...shapeOf(blocks), version: read.version, revision: read.revision };
  }

  /** Merge the API's newest version into the fragment, if it is newer than the one it reflects. */
  private async pull(): Promise<void> {
    if (this.closed || this.base === null) return;
    const next = await this.read();
    const base = this.base;
    if (this.closed || next.version <= base.version) return;
    if (next.depth > MAX_IMPORT_DEPTH) {
      // An agent nested the document past what the editor holds: the room cannot follow it.
      this.onBroken(tooDeep(next.depth));
      return;
    }
    const busy = new Set<string>();
    for (const p of this.pending.values()) for (const id of p.touched) busy.add(id);
    this.doc.transact(() => applyVersion(this.fragment, base.blocks, next.blocks, { busy: (id) => busy.has(id) }), BRIDGE_ORIGIN);
    this.base = next;
  }

  /** The fragment's blocks as API blocks: without the editor's empty trailing paragraph. */
  private editorBlocks(base: Base): EditorBlock[] {
    const blocks = readFragment(this.fragment);
    const last = blocks[blocks.length - 1];
    if (last !== undefined && isTrailingParagraph(last, (id) => base.ids.has(id))) blocks.pop();
    return blocks;
  }

  /**
   * Commit one person's pending edits as the next API version (nothing when they change nothing):
   * only their blocks while others have edits pending (or edits that could not be committed), else
   * the whole fragment. A commit refused for good keeps their blocks out of others' versions until
   * they edit again.
   */
  private async commit(holder: string): Promise<void> {
    const p = this.pending.get(holder);
    if (this.closed || p === undefined || this.base === null) return;
    // Everything they edited up to now goes in (keystrokes after this start a new pending set).
    this.clearTimers(p);
    this.pending.delete(holder);
    for (let attempt = 1; ; attempt++) {
      const base = this.base;
      const current = this.editorBlocks(base);
      const others = this.failed.size > 0 || [...this.pending.values()].some((o) => o.touched.size > 0 || o.deleted.size > 0);
      const blocks = others ? ownBlocks(base.blocks, current, p.touched, p.deleted) : current;
      try {
        if (attempt === 1) await this.checkCommit(p.actor);
        const outcome = await this.documents.commitEditorBlocks(p.actor, this.documentRef, {
          idempotencyKey: `sync_${this.mintKey()}`,
          ifRevision: base.revision,
          editorBlocks: blocks,
        });
        if (outcome !== null && outcome.document.version > (this.base?.version ?? 0)) {
          const committed = (JSON.parse(outcome.document.documentJson) as { blocks: EditorBlock[] }).blocks;
          this.base = { blocks: committed, ...shapeOf(committed), version: outcome.document.version, revision: outcome.document.revision };
        }
        return;
      } catch (error) {
        if (attempt === 1 && isServiceError(error) && (error.code === 'RATE_LIMITED' || error.code === 'AUTH_REQUIRED')) {
          // The holder's grant refused the commit (budget spent, token revoked or expired): an outcome,
          // not a fault. Their edits stay out of versions until they edit again (and are checked again);
          // a revoked or expired grant's socket is being closed meanwhile.
          if (!this.closed) this.failed.set(holder, { actor: p.actor, touched: p.touched, deleted: p.deleted });
          return;
        }
        const stale = isServiceError(error) && error.code === 'PRECONDITION_FAILED';
        if (!stale && !this.closed) {
          // Refused for a passing reason (the storage away: 503): again after another pause. Else for good.
          if (isServiceError(error) && error.retryable) this.edited(p.actor, p.touched, p.deleted);
          else this.failed.set(holder, { actor: p.actor, touched: p.touched, deleted: p.deleted });
        }
        if (!stale || this.closed) throw error;
        await this.pull();
        if (attempt >= COMMIT_ATTEMPTS) {
          // Agents keep winning the race: try again after another pause (the edits stay pending).
          this.edited(p.actor, p.touched, p.deleted);
          return;
        }
      }
    }
  }
}
