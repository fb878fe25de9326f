/**
 * Full-text search over the knowledge graph and the released public artifacts, with MiniSearch
 * (a maintained, dependency-free BM25 index).
 * @remarks One index per partition (each space, and `public`), so a query can never see another
 * space's records: the boundary is structural, not a filter. A partition is built from storage on
 * its first query after start and kept current: the service adds what this process accepts or
 * promotes at once, and before every query the partition catches up with records written since
 * (by this or another process), read newest-first from the storage listing until it meets what it
 * already holds.
 * @module
 */
import MiniSearch from 'minisearch';
import type { EngineDeps } from '../deps.ts';
import { searchTextOf } from './graph.ts';
import { KnowledgeCollections, type GraphRecord, type ReleaseRecord, type SpaceRecord } from './records.ts';

/** One indexed document. */
export interface SearchDoc {
  id: string;
  kind: string;
  title: string;
  text: string;
  snippet: string;
  /** Public partition: the artifact's ref as JSON; space partitions: the record id. */
  ref: string;
}

/** One ranked hit. */
export interface SearchHit {
  kind: string;
  ref: string;
  title: string;
  snippet: string;
  score: number;
}

/** MiniSearch options shared by the service and the benchmark's baseline. */
export const MINISEARCH_OPTIONS = {
  fields: ['title', 'text'],
  storeFields: ['kind', 'title', 'snippet', 'ref'],
  // prefix matching for the last term only (what a person is still typing); small typos forgiven in longer terms
  searchOptions: {
    boost: { title: 3 },
    prefix: (_term: string, i: number, terms: string[]) => i === terms.length - 1,
    fuzzy: (term: string) => (term.length > 5 ? 0.2 : false),
    maxFuzzy: 2,
  },
};

interface Partition {
  mini: MiniSearch<SearchDoc>;
  /** Highest ordinal indexed (graph record ordinal, or promoted-release ordinal). */
  indexed: number;
  queue: Promise<unknown>;
}

const snippetOf = (text: string) => (text.length > 280 ? `${text.slice(0, 279)}…` : text);

/** The search document of a graph record, or null when it carries no searchable text. */
export function graphDoc(r: GraphRecord): SearchDoc | null {
  const t = searchTextOf(r);
  if (!t) return null;
  return { id: r.id, kind: r.kind, title: t.title, text: t.text, snippet: snippetOf(t.text || t.title), ref: r.id };
}

/** The search document of a promoted release. */
export function releaseDoc(r: ReleaseRecord): SearchDoc {
  const ref = JSON.stringify({ kind: r.kind, artifactId: r.artifactId, revision: r.revision, v: 1 });
  return { id: `${r.kind}/${r.artifactId}/${r.revision}`, kind: r.kind, title: r.title, text: r.snippet, snippet: r.snippet, ref };
}

/** The search index of one engine. */
export function createSearchIndex(deps: EngineDeps) {
  const { storage } = deps;
  const partitions = new Map<string, Partition>();

  function partition(name: string): Partition {
    let p = partitions.get(name);
    if (!p) {
      p = { mini: new MiniSearch<SearchDoc>(MINISEARCH_OPTIONS), indexed: 0, queue: Promise.resolve() };
      partitions.set(name, p);
    }
    return p;
  }

  /** Read what was written after `p.indexed`, newest first, and add it. */
  async function catchUp(name: string, p: Partition): Promise<void> {
    const isPublic = name === 'public';
    const head = isPublic
      ? ((await storage.getRecord<{ count: number }>(KnowledgeCollections.counters, 'public'))?.value.count ?? 0)
      : ((await storage.getRecord<SpaceRecord>(KnowledgeCollections.spaces, name))?.value.recordCount ?? 0);
    if (head <= p.indexed) return;
    const fresh: SearchDoc[] = [];
    let after: string | null = null;
    outer: for (;;) {
      const page: { records: { value: GraphRecord | ReleaseRecord }[]; next: string | null } = await storage.listPage<GraphRecord | ReleaseRecord>(isPublic ? KnowledgeCollections.releases : KnowledgeCollections.graph, name, 1000, after);
      for (const rec of page.records) {
        const ordinal = isPublic ? ((rec.value as ReleaseRecord).publicOrdinal ?? 0) : (rec.value as GraphRecord).ordinal;
        if (ordinal <= p.indexed) break outer;
        const doc = isPublic ? releaseDoc(rec.value as ReleaseRecord) : graphDoc(rec.value as GraphRecord);
        if (doc && !p.mini.has(doc.id)) fresh.push(doc);
      }
      if (page.next === null) break;
      after = page.next;
    }
    p.mini.addAll(fresh);
    p.indexed = head;
  }

  /** Bring a partition up to date (serialized per partition). */
  function sync(name: string): Promise<void> {
    const p = partition(name);
    const run = p.queue.then(() => catchUp(name, p));
    p.queue = run.catch(() => undefined);
    return run;
  }

  return {
    sync,
    /** Keep a partition current if it was built (a partition nobody queried is built on its first query). */
    refresh(name: string): Promise<void> {
      return partitions.has(name) ? sync(name) : Promise.resolve();
    },
    /**
     * One page of the ranked hits of `query` in one partition (after catching up), best first, and
     * the total number of hits. Only the page is turned into hits: a broad query can match most of
     * the partition.
     */
    async query(name: string, query: string, offset: number, limit: number): Promise<{ hits: SearchHit[]; total: number }> {
      await sync(name);
      const mini = partition(name).mini;
      let results = mini.search(query, { combineWith: 'AND' });
      if (results.length === 0) results = mini.search(query);
      const hits = results.slice(offset, offset + limit).map((r) => ({ kind: String(r.kind), ref: String(r.ref), title: String(r.title), snippet: String(r.snippet), score: r.score }));
      return { hits, total: results.length };
    },
    /** Number of documents in a partition (tests and benchmarks). */
    size(name: string): number {
      return partitions.get(name)?.mini.documentCount ?? 0;
    },
  };
}

/** The search index type. */
export type SearchIndex = ReturnType<typeof createSearchIndex>;
