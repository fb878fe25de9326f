/**
 * What `kw bench` runs: the built-in workloads, workload files (JSON), and how an operation picks its
 * document (uniform, zipfian as YCSB's, or partitioned by client).
 * @module
 */
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { UsageError } from '../usage.ts';

/** The operations of a workload. `append` creates a block at the end; `create`/`move`/`delete` keep the document near its size. */
export const OPERATIONS = ['read', 'edit', 'create', 'move', 'delete', 'append'] as const;
export type Operation = (typeof OPERATIONS)[number];

export type Distribution = 'uniform' | 'zipfian' | 'partitioned';

/** A workload: an operation mix (relative weights) and its document defaults. */
export interface Workload {
  name: string;
  description: string;
  mix: Partial<Record<Operation, number>>;
  /** Documents made; default --clients. `hot`: 1. */
  documents?: number;
  blocks?: number;
  distribution?: Distribution;
  /** Markdown of the text an edit writes (`{n}` is replaced by a counter); default a short sentence. */
  text?: string;
}

/** The built-in workloads (decisions.md, "kw bench"). */
export const BUILT_IN: Record<string, Workload> = {
  edit: { name: 'edit', description: 'single-block edits (default)', mix: { edit: 1 } },
  read: { name: 'read', description: 'reads of the whole document (rich-json)', mix: { read: 1 } },
  mixed: { name: 'mixed', description: '50% reads, 50% edits (YCSB A)', mix: { read: 50, edit: 50 } },
  'read-mostly': { name: 'read-mostly', description: '95% reads, 5% edits (YCSB B)', mix: { read: 95, edit: 5 } },
  structure: { name: 'structure', description: 'create, move and delete blocks in equal parts', mix: { create: 1, move: 1, delete: 1 } },
  append: { name: 'append', description: 'append a block at the end: documents grow', mix: { append: 1 } },
  hot: { name: 'hot', description: 'every client edits one document: 412 -> read -> retry', mix: { edit: 1 }, documents: 1, distribution: 'uniform' },
  // Run by ./coedit.ts, not by the runner's operation mix: --editors editors type over
  // /documents/{ref}/sync while --clients agents edit on the API, all on one document.
  coedit: { name: 'coedit', description: 'editors typing over /sync beside agents on the API, one document', mix: { edit: 1 }, documents: 1, distribution: 'uniform' },
};

const weight = v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1e6)));
const WorkloadFileSchema = v.strictObject({
  v: v.literal(1),
  name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(80))),
  description: v.optional(v.pipe(v.string(), v.maxLength(500))),
  mix: v.pipe(
    v.strictObject({ read: weight, edit: weight, create: weight, move: weight, delete: weight, append: weight }),
    v.check((mix) => Object.values(mix).some((w) => (w ?? 0) > 0), 'needs at least one operation with a weight above 0'),
  ),
  documents: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000))),
  blocks: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000))),
  distribution: v.optional(v.picklist(['uniform', 'zipfian', 'partitioned'])),
  text: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(40_000))),
});

/** A built-in workload by name, or a workload file read and checked (a bad file is a usage error). */
export async function loadWorkload(nameOrFile: string, helpCommand: string): Promise<Workload> {
  const builtIn = BUILT_IN[nameOrFile];
  if (builtIn) return builtIn;
  let text: string;
  try {
    text = await readFile(nameOrFile, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the workload file ${nameOrFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, helpCommand);
  }
  return parseWorkload(text, nameOrFile, helpCommand);
}

/** Check a workload file's text. */
export function parseWorkload(text: string, file: string, helpCommand: string): Workload {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`the workload file ${file} is not JSON: ${(error as Error).message}`, helpCommand);
  }
  const parsed = v.safeParse(WorkloadFileSchema, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
    throw new UsageError(`the workload file ${file}: ${path ? `${path}: ` : ''}${issue.message}`, helpCommand);
  }
  const w = parsed.output;
  const mix: Partial<Record<Operation, number>> = {};
  for (const op of OPERATIONS) if ((w.mix[op] ?? 0) > 0) mix[op] = w.mix[op]!;
  return {
    name: w.name ?? file,
    description: w.description ?? `workload file ${file}`,
    mix,
    ...(w.documents === undefined ? {} : { documents: w.documents }),
    ...(w.blocks === undefined ? {} : { blocks: w.blocks }),
    ...(w.distribution === undefined ? {} : { distribution: w.distribution }),
    ...(w.text === undefined ? {} : { text: w.text }),
  };
}

/** Picks operations by their weights. */
export function mixPicker(mix: Partial<Record<Operation, number>>, random: () => number = Math.random): () => Operation {
  const entries = OPERATIONS.filter((op) => (mix[op] ?? 0) > 0).map((op) => [op, mix[op]!] as const);
  const total = entries.reduce((s, [, w]) => s + w, 0);
  if (entries.length === 1) {
    const only = entries[0]![0];
    return () => only;
  }
  return () => {
    let r = random() * total;
    for (const [op, w] of entries) {
      if ((r -= w) < 0) return op;
    }
    return entries[entries.length - 1]![0];
  };
}

/**
 * A zipfian sampler over 0..n-1 (item 0 the most popular), the generator of YCSB (Gray et al.,
 * "Quickly generating billion-record synthetic databases"), skew theta (YCSB's 0.99).
 */
export function zipfian(n: number, theta = 0.99, random: () => number = Math.random): () => number {
  if (!(n >= 1)) throw new RangeError('zipfian needs n >= 1');
  if (n === 1) return () => 0;
  let zetan = 0;
  for (let i = 1; i <= n; i++) zetan += 1 / i ** theta;
  const zeta2 = 1 + 1 / 2 ** theta;
  const alpha = 1 / (1 - theta);
  const eta = (1 - (2 / n) ** (1 - theta)) / (1 - zeta2 / zetan);
  return () => {
    const u = random();
    const uz = u * zetan;
    if (uz < 1) return 0;
    if (uz < zeta2) return 1;
    return Math.min(n - 1, Math.floor(n * (eta * u - eta + 1) ** alpha));
  };
}

/** A document picker: the document index operation of client `client` works on. */
export function documentPicker(distribution: Distribution, documents: number, clients: number, random: () => number = Math.random): (client: number) => number {
  if (distribution === 'zipfian') {
    const z = zipfian(documents, 0.99, random);
    return () => z();
  }
  if (distribution === 'partitioned') {
    // Client c owns documents c, c + clients, …; with fewer documents than clients, clients share by modulo.
    return (client) => {
      if (documents <= clients) return client % documents;
      const owned = Math.ceil((documents - client) / clients);
      return client + clients * Math.floor(random() * owned);
    };
  }
  return () => Math.floor(random() * documents);
}

/** A small seeded random source (mulberry32), for reproducible tests. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
