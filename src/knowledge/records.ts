/**
 * What the knowledge domain stores: collection names, key layout and record shapes, in one place.
 * @remarks Every write goes through `Storage.commit` batches; graph records are put with
 * `expectedRevision: null` (they are immutable, never overwritten), the space head with its stored
 * revision (compare-and-set: two processes cannot both move one graph).
 * @module
 */
import type { ProposalRequest, ProposalState } from './proposal-schema.ts';
import type { ProposalDecision } from './states.ts';

/** Storage collections of the knowledge domain. */
export const KnowledgeCollections = {
  /** Space heads, keyed by spaceRef. */
  spaces: 'kspaces',
  /** Proposals, keyed by proposalRef. */
  proposals: 'kproposals',
  /** Review → proposal, keyed by reviewRef (immutable). */
  reviews: 'kreviews',
  /** Submission idempotency of older versions (now the write protocol's records, src/idempotency); no longer written. */
  submissions: 'ksubmissions',
  /** Graph records, keyed by `<spaceRef>/<recordId>`; listed per space, newest first. */
  graph: 'kgraph',
  /** Graph revisions, keyed by `<spaceRef>/<revision>`. */
  revisions: 'krevisions',
  /** Entities by normalized name or canonical identifier, keyed by `<spaceRef>/<n|i>/<sha256>`. */
  lookup: 'klookup',
  /** Releases, keyed by `<kind>/<artifactId>/<revision>`; promoted ones listed in partition `public`. */
  releases: 'kreleases',
  /** Counters, e.g. `public`: how many releases were promoted. */
  counters: 'kcounters',
} as const;

/** Fixed-width decimal for sort keys of ordinals. */
export function ordinalKey(n: number): string {
  return String(n).padStart(15, '0');
}

/** The owner's publication enablement of a space. */
export interface PublicationSetting {
  enabled: boolean;
  person: string;
  at: number;
}

/** The head of one space's knowledge: its owner, current graph revision and record count. */
export interface SpaceRecord {
  v: 1;
  spaceRef: string;
  accountId: string;
  documentRef: string;
  graphRevision: string;
  /** Graph records so far; each record's ordinal is its position (1-based). */
  recordCount: number;
  publication: PublicationSetting | null;
  createdAt: number;
  updatedAt: number;
}

/** One step of a proposal's history. */
export interface ProposalStep {
  decision: ProposalDecision | 'submit';
  state: ProposalState;
  person: string | null;
  note: string | null;
  at: number;
}

/** A stored proposal. */
export interface ProposalRecord {
  v: 1;
  proposalRef: string;
  reviewRef: string;
  spaceRef: string;
  accountId: string;
  jobId: string;
  credentialRef: string | null;
  state: ProposalState;
  /** The canonical request (URIs canonicalized). */
  request: ProposalRequest;
  conflicts: string[];
  createdAt: number;
  updatedAt: number;
  decidedAt: number | null;
  history: ProposalStep[];
  /** After acceptance: the graph revision it produced and the artifact ids minted for its keys. */
  accepted: { graphRevision: string; entityIds: Record<string, string>; inquiryIds: Record<string, string> } | null;
}

/** Graph record kinds as this service names them on the wire (the contract's 18, kebab-case). */
export const GRAPH_RECORD_KINDS = [
  'activity', 'assertion', 'context', 'dependency-manifest', 'edition', 'entity', 'evidence', 'identity-operation',
  'inquiry', 'inquiry-event', 'review-decision', 'rights-decision', 'schema', 'shape', 'statement', 'type-membership',
  'view', 'vocabulary',
] as const;
/** A graph record kind. */
export type GraphRecordKind = (typeof GRAPH_RECORD_KINDS)[number];

/** Fields every graph record carries. */
export interface GraphRecordBase {
  v: 1;
  id: string;
  kind: GraphRecordKind;
  spaceRef: string;
  /** 1-based position in the space's graph. */
  ordinal: number;
  /** The proposal whose acceptance wrote it. */
  proposalRef: string;
  createdAt: number;
}

/** An immutable graph record. `body` holds the kind's meaning (see `graph.ts`). */
export interface GraphRecord extends GraphRecordBase {
  body: Record<string, unknown>;
}

/** One release: the binding that lets a projection resolve at a public locator once promoted. */
export interface ReleaseRecord {
  v: 1;
  kind: 'entity' | 'inquiry' | 'edition';
  artifactId: string;
  revision: string;
  spaceRef: string;
  /** The graph revision the projection is pinned to (for an edition: the one it was synthesized at). */
  graphRevision: string;
  /** Canonical JSON of the projection value: the exact bytes served. */
  projectionJson: string;
  byteLength: number;
  title: string;
  snippet: string;
  releasedBy: string;
  releasedAt: number;
  state: 'pending-promotion' | 'promoted' | 'declined';
  promotion: { decision: 'approve' | 'decline'; person: string; at: number } | null;
  /** Position among promoted releases (1-based), once promoted. */
  publicOrdinal: number | null;
}

/** The storage key of a release. */
export function releaseKey(kind: string, artifactId: string, revision: string): string {
  return `${kind}/${artifactId}/${revision}`;
}
