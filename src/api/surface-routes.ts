/**
 * Public artifacts (anonymous), review reads and search (activation-blocked by default) and the
 * library command endpoint.
 * @module
 */
import { ServiceError, invalid, notFound, type FieldError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import type { Operation } from './context.ts';
import { notBuilt } from './unavailable.ts';

const ARTIFACT_ID: Readonly<Record<string, RegExp>> = {
  entity: Patterns.entityId,
  inquiry: Patterns.inquiryId,
  edition: Patterns.editionId,
};

/**
 * GET /api/v1/public/artifacts/{kind}/{artifactId}/{revision}. Anonymous; never charged.
 * @remarks A kind other than entity, inquiry or edition is 404 (no such locator exists); an artifactId
 * that does not carry its kind's prefix and shape, or a revision that is not 64 lowercase hex, is 400
 * naming `path.artifactId` / `path.revision`. A well-formed locator answers 404: nothing has been
 * released on this server yet.
 */
export const readPublicArtifact: Operation = {
  auth: 'none',
  charge: 'never',
  run(ctx) {
    const [kind, artifactId, revision] = ctx.params as [string, string, string];
    const pattern = Object.hasOwn(ARTIFACT_ID, kind) ? ARTIFACT_ID[kind] : undefined;
    if (!pattern) throw notFound('The public artifact');
    const errors: FieldError[] = [];
    if (!pattern.test(artifactId)) errors.push({ field: 'path.artifactId', message: `must be a ${kind} artifactId (${pattern.source.slice(1, 6)} and 24 of [a-z0-9])` });
    if (!Patterns.sha256.test(revision)) errors.push({ field: 'path.revision', message: 'must be 64 lowercase hex characters' });
    if (errors.length) throw invalid('The public artifact locator is malformed.', errors);
    throw new ServiceError('NOT_FOUND', `No released ${kind} projection exists at this exact identity and revision.`);
  },
};

/** GET /api/v1/reviews/{reviewRef}: activation-blocked by default. */
export const readReview: Operation = {
  auth: 'bearer',
  allScopes: ['review:read'],
  activation: 'reviews',
  charge: 'never',
  run() {
    throw notBuilt('Reading reviews');
  },
};

/** POST /api/v1/search: activation-blocked by default; public:read or knowledge:read. */
export const search: Operation = {
  auth: 'bearer',
  anyScopes: ['public:read', 'knowledge:read'],
  activation: 'search',
  charge: 'never',
  run() {
    throw notBuilt('Search');
  },
};

const LIBRARY_READS = new Set(['list', 'get', 'reader-page']);
const LIBRARY_WRITES = new Set(['save-link', 'highlight', 'create-note', 'set-reading-state', 'prepare-upload', 'finish-upload', 'prepare-import']);
/** Commands whose retries the contract ties to an idempotencyKey in the body. */
const LIBRARY_KEYED = new Set(['save-link', 'highlight']);

/**
 * POST /api/v1/library: the library command endpoint. The command envelope is checked now (a known
 * `type`, the scope it needs — library:read for list/get/reader-page, library:write otherwise — and an
 * `idempotencyKey` of at least 16 characters where the contract asks for one); the commands themselves
 * answer 503 until the library lands. Not charged while it is not built.
 */
export const libraryCommand: Operation = {
  auth: 'bearer',
  anyScopes: ['library:read', 'library:write'],
  charge: 'never',
  body: 'json',
  run(ctx) {
    const body = ctx.body as Record<string, unknown> | null;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalid('The library body is a command object with a type field.', [{ field: '$', message: 'must be an object' }]);
    }
    const type = body.type;
    if (typeof type !== 'string' || (!LIBRARY_READS.has(type) && !LIBRARY_WRITES.has(type))) {
      throw invalid(`type must be one of ${[...LIBRARY_READS, ...LIBRARY_WRITES].join(', ')}.`, [
        { field: 'type', message: 'must be a known library command' },
      ]);
    }
    const needed = LIBRARY_READS.has(type) ? 'library:read' : 'library:write';
    if (!ctx.credential!.scopeSet.has(needed)) throw new ServiceError('FORBIDDEN', `The ${type} command needs the scope ${needed}.`);
    const key = body.idempotencyKey;
    if ((LIBRARY_KEYED.has(type) || key !== undefined) && (typeof key !== 'string' || key.length < 16)) {
      throw invalid('idempotencyKey must be a string of at least 16 characters.', [
        { field: 'idempotencyKey', message: 'must be a string of at least 16 characters' },
      ]);
    }
    throw notBuilt('The link library');
  },
};
