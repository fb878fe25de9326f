/**
 * The published OpenAPI 3.1 document (served at `/openapi.json`), generated from the valibot schemas:
 * request bodies from `documents/schemas.ts`, envelopes and resources from `response-schemas.ts`.
 * Operator-only operations (`/operator/v1`) are omitted, as the contract requires.
 * @module
 */
import { toJsonSchemaDefs } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import {
  BlockIdSchema,
  BlockSchema,
  DocumentCreateRequestSchema,
  DocumentMutationRequestSchema,
  EditBlockSchema,
  MutationSchema,
} from '../documents/schemas.ts';
import { responseComponents } from './response-schemas.ts';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const hdr = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
const prm = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });
const rsp = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

/** Request-body schemas taken from the domain (the same objects the service validates with). */
const requestComponents = {
  BlockId: BlockIdSchema,
  Block: BlockSchema,
  EditBlock: EditBlockSchema,
  Mutation: MutationSchema,
  DocumentCreateRequest: DocumentCreateRequestSchema,
  DocumentMutationRequest: DocumentMutationRequestSchema,
};

function componentSchemas(): Record<string, Json> {
  const definitions = { ...requestComponents, ...responseComponents } as unknown as Record<
    string,
    v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>
  >;
  return toJsonSchemaDefs(definitions, {
    target: 'draft-2020-12',
    errorMode: 'throw',
    overrideRef: (context) => `#/components/schemas/${context.referenceId}`,
  }) as Record<string, Json>;
}

// ---------------------------------------------------------------------------------------------
// Headers, parameters and shared responses

const headers: Record<string, Json> = {
  XRequestId: {
    description: 'Server-minted request id, equal to meta.requestId.',
    required: true,
    schema: ref('RequestId'),
  },
  RequestsRemaining: {
    description: "Authenticated responses: what is left of the credential's request budget in the current window.",
    schema: { type: 'integer', minimum: 0, maximum: 10000 },
  },
  ResearchRunsRemaining: {
    description: 'Authenticated responses, when known: research runs left.',
    schema: { type: 'integer', minimum: 0 },
  },
  ServiceRevision: {
    description: 'The opaque revision of the resource. Send it back unchanged as Service-If-Revision on the next write.',
    schema: { type: 'string', minLength: 1 },
  },
  ETag: {
    description: 'A weak ETag of the canonical read; send it as If-None-Match. Never a write precondition.',
    schema: { type: 'string', pattern: '^W/".*"$' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  Location: {
    description: 'The path of the created document.',
    schema: { type: 'string' },
  },
  Allow: {
    description: 'The methods the path has, comma-separated.',
    required: true,
    schema: { type: 'string' },
  },
  MarkdownLossCount: {
    description: 'On Markdown reads: how many things of the rich document the Markdown projection could not carry.',
    schema: { type: 'integer', minimum: 0 },
  },
};

const TOKEN_PATTERN = '^[A-Za-z0-9_-]{16,128}$';

const parameters: Record<string, Json> = {
  XRequestId: {
    name: 'X-Request-Id',
    in: 'header',
    description: 'Optional client request id, echoed as meta.clientRequestId (the server always mints its own). Outside 16-128 characters: 400.',
    schema: { type: 'string', pattern: TOKEN_PATTERN },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description:
      'Every write needs one (missing: 400 IDEMPOTENCY_REQUIRED). An exact retry reuses key, body and revision; a new intent needs a new key (same key, other request: 409 IDEMPOTENCY_CONFLICT).',
    schema: { type: 'string', pattern: TOKEN_PATTERN },
  },
  ServiceIfRevision: {
    name: 'Service-If-Revision',
    in: 'header',
    required: true,
    description: 'The exact Service-Revision of the last read. Missing: 428 PRECONDITION_REQUIRED; stale: 412 PRECONDITION_FAILED.',
    schema: { type: 'string', minLength: 1 },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    description: 'The ETag of an earlier read; 304 when unchanged.',
    schema: { type: 'string' },
  },
  LastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    description: 'Resume a stream after this event id (the decimal sequence exactly as carried by the id field). Invalid: 400.',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' },
  },
  AcceptEvents: {
    name: 'Accept',
    in: 'header',
    description: 'Send text/event-stream for the stream form; otherwise a JSON page is returned. (Also expressed by the response media types.)',
    schema: { type: 'string' },
  },
  Limit: {
    name: 'limit',
    in: 'query',
    description: 'Page size.',
    schema: { type: 'integer', minimum: 1, maximum: 50, default: 20 },
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    description: 'The nextCursor of the prior page, sent back unchanged. A cursor of another list or credential: 400.',
    schema: { type: 'string', minLength: 1 },
  },
  DocumentFormat: {
    name: 'format',
    in: 'query',
    description:
      'rich-json: the exact canonical editor JSON; blocks: a flat list of authored blocks; markdown: text/markdown with the loss count. Bad format: 400.',
    schema: { type: 'string', enum: ['rich-json', 'blocks', 'markdown'], default: 'rich-json' },
  },
  ReportFormat: {
    name: 'format',
    in: 'query',
    required: true,
    description: 'rich-json (also needs document:read) or markdown. Bad format: 400.',
    schema: { type: 'string', enum: ['rich-json', 'markdown'] },
  },
  After: {
    name: 'after',
    in: 'query',
    description: 'Return events whose eventId is greater than this decimal sequence. Invalid: 400.',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' },
  },
  DocumentRef: {
    name: 'documentRef',
    in: 'path',
    required: true,
    schema: ref('DocumentRef'),
  },
  JobId: { name: 'jobId', in: 'path', required: true, schema: ref('JobId') },
  ReviewRef: {
    name: 'reviewRef',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: '^krvw_[a-f0-9]{48}$' },
  },
  ArtifactKind: {
    name: 'kind',
    in: 'path',
    required: true,
    schema: { type: 'string', enum: ['entity', 'inquiry', 'edition'] },
  },
  ArtifactId: {
    name: 'artifactId',
    in: 'path',
    required: true,
    description: 'kent_ (entity), kinq_ (inquiry) or kedn_ (edition) followed by 24 [a-z0-9], matching kind.',
    schema: { type: 'string', pattern: '^(kent|kinq|kedn)_[a-z0-9]{24}$' },
  },
  ArtifactRevision: {
    name: 'revision',
    in: 'path',
    required: true,
    description: 'The exact graph revision or edition digest.',
    schema: ref('Sha256'),
  },
};

const errorJson = { 'application/json': { schema: ref('ErrorEnvelope') } };

/** Response headers every authenticated response carries. */
function authedHeaders(extra: Record<string, Json> = {}, research = false): Record<string, Json> {
  return {
    'X-Request-Id': hdr('XRequestId'),
    'X-Service-Requests-Remaining': hdr('RequestsRemaining'),
    ...(research ? { 'X-Service-Research-Runs-Remaining': hdr('ResearchRunsRemaining') } : {}),
    ...extra,
  };
}

const responses: Record<string, Json> = {
  Unauthorized: {
    description: 'AUTH_REQUIRED: no valid credential (requiredAction authenticate); AUTH_AMBIGUOUS: a bearer token and a browser session cookie together.',
    headers: { 'X-Request-Id': hdr('XRequestId') },
    content: errorJson,
  },
  Forbidden: {
    description: 'FORBIDDEN: the credential lacks the scope, or the operation crosses its boundary.',
    headers: authedHeaders(),
    content: errorJson,
  },
  MethodNotAllowed: {
    description: 'METHOD_NOT_ALLOWED: the path exists but not with the method used; Allow lists its methods.',
    headers: { 'X-Request-Id': hdr('XRequestId'), Allow: hdr('Allow') },
    content: errorJson,
  },
  RateLimited: {
    description: "RATE_LIMITED: the credential's request budget is spent until the window ends (Retry-After, error.retryAfterMs).",
    headers: { 'X-Request-Id': hdr('XRequestId'), 'X-Service-Requests-Remaining': hdr('RequestsRemaining'), 'Retry-After': hdr('RetryAfter') },
    content: errorJson,
  },
  Unavailable: {
    description: 'TEMPORARILY_UNAVAILABLE: a dependency is unavailable or the surface is not activated (activation-blocked answers charge no budget). Honor Retry-After when present.',
    headers: { 'X-Request-Id': hdr('XRequestId'), 'Retry-After': hdr('RetryAfter') },
    content: errorJson,
  },
  InternalError: {
    description: 'INTERNAL_ERROR: unexpected failure. Retry once with the same idempotency key, then report meta.requestId.',
    headers: { 'X-Request-Id': hdr('XRequestId') },
    content: errorJson,
  },
};

function error(description: string, extraHeaders: Record<string, Json> = {}): Json {
  return { description, headers: authedHeaders(extraHeaders), content: errorJson };
}

const bad = (what: string) => error(`INVALID_REQUEST: ${what}.`);
const notFound = (what: string) =>
  error(`NOT_FOUND: ${what} (absence and out-of-boundary are indistinguishable).`);

/** The shared tail of every authenticated operation. */
function authedErrors(): Record<string, Json> {
  return {
    '401': rsp('Unauthorized'),
    '403': rsp('Forbidden'),
    '405': rsp('MethodNotAllowed'),
    '429': rsp('RateLimited'),
    '500': rsp('InternalError'),
    '503': rsp('Unavailable'),
  };
}

function jsonBody(schema: string, description?: string): Json {
  return { required: true, ...(description ? { description } : {}), content: { 'application/json': { schema: ref(schema) } } };
}

function ok(description: string, schema: string, extraHeaders: Record<string, Json> = {}, research = false): Json {
  return {
    description,
    headers: authedHeaders(extraHeaders, research),
    content: { 'application/json': { schema: ref(schema) } },
  };
}

const revisionHeaders = { 'Service-Revision': hdr('ServiceRevision'), ETag: hdr('ETag') };
const notModified = (research = false): Json => ({
  description: 'Not modified since the If-None-Match ETag: empty body, current Service-Revision and ETag.',
  headers: authedHeaders(revisionHeaders, research),
});

/** `security` of an operation: alternatives of scope sets (role names of the bearer scheme). */
const scopes = (...alternatives: string[][]): Json[] => alternatives.map((set) => ({ bearerAuth: set }));

const researchRead = scopes(['research:read'], ['research:run']);

// ---------------------------------------------------------------------------------------------
// Paths

function paths(): Record<string, Json> {
  return {
    '/api/v1/auth': {
      get: {
        operationId: 'getAuth',
        tags: ['auth'],
        summary: 'Read the principal of the bearer token',
        description:
          'The principal, its remaining request budget and budgets. A document-bound credential also receives its documentRef and browserHref.',
        security: scopes([]),
        parameters: [prm('XRequestId')],
        responses: {
          '200': ok('The principal.', 'PrincipalEnvelope'),
          '400': bad('X-Request-Id is malformed'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/documents': {
      get: {
        operationId: 'listDocuments',
        tags: ['documents'],
        summary: 'List documents',
        description:
          'Newest updatedAt first. An account-wide credential sees every API-reachable document of its account; a document-bound credential sees only its bound document. Summaries carry no bodies.',
        security: scopes(['document:read']),
        parameters: [prm('Limit'), prm('Cursor'), prm('XRequestId')],
        responses: {
          '200': ok('A page of document summaries.', 'DocumentPageEnvelope'),
          '400': bad('bad limit or cursor (a cursor of another list or credential)'),
          ...authedErrors(),
        },
      },
      post: {
        operationId: 'createDocument',
        tags: ['documents'],
        summary: 'Create a document',
        description:
          'Account-wide credentials only (a document-bound credential gets 403). Starts no research and publishes nothing.',
        security: scopes(['document:create']),
        parameters: [prm('IdempotencyKey'), prm('XRequestId')],
        requestBody: jsonBody('DocumentCreateRequest'),
        responses: {
          '200': ok('Exact replay of an earlier creation (receipt.idempotency replayed).', 'DocumentEnvelope', { 'Service-Revision': hdr('ServiceRevision') }),
          '201': ok('Created (receipt.idempotency created).', 'DocumentEnvelope', {
            'Service-Revision': hdr('ServiceRevision'),
            Location: hdr('Location'),
          }),
          '400': bad('bad body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key'),
          '409': error('IDEMPOTENCY_CONFLICT: the key is bound to a different body.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/documents/{documentRef}': {
      get: {
        operationId: 'getDocument',
        tags: ['documents'],
        summary: 'Read a document in one of three representations',
        description:
          'All representations carry the same Service-Revision. When the document holds blocks outside the Markdown grammar, blocks and markdown answer 409 CONFLICT and rich-json must be used.',
        security: scopes(['document:read']),
        parameters: [prm('DocumentRef'), prm('DocumentFormat'), prm('IfNoneMatch'), prm('XRequestId')],
        responses: {
          '200': {
            description: 'The document: rich-json (Document) or blocks as JSON, markdown as text/markdown.',
            headers: authedHeaders({ ...revisionHeaders, 'X-Service-Markdown-Loss-Count': hdr('MarkdownLossCount') }),
            content: {
              'application/json': { schema: { oneOf: [ref('DocumentEnvelope'), ref('BlocksEnvelope')] } },
              'text/markdown': { schema: { type: 'string', description: 'format=markdown; X-Service-Markdown-Loss-Count is set.' } },
            },
          },
          '304': notModified(),
          '400': bad('bad format'),
          '404': notFound('unknown document or outside the boundary'),
          '409': error('CONFLICT: the document holds blocks outside the Markdown grammar; use format=rich-json.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/documents/{documentRef}/mutations': {
      post: {
        operationId: 'mutateDocument',
        tags: ['documents'],
        summary: 'Apply one semantic block mutation',
        description:
          'create, edit, move or delete blocks, guarded by the revision precondition and an idempotency key. The whole mutation applies or none of it does.',
        security: scopes(['document:write']),
        parameters: [prm('DocumentRef'), prm('IdempotencyKey'), prm('ServiceIfRevision'), prm('XRequestId')],
        requestBody: jsonBody('DocumentMutationRequest'),
        responses: {
          '200': ok('Applied (or replayed): the new document and the mutation receipt.', 'DocumentMutationEnvelope', {
            'Service-Revision': hdr('ServiceRevision'),
          }),
          '400': bad('invalid body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key'),
          '404': notFound('unknown document or outside the boundary'),
          '409': error(
            'IDEMPOTENCY_CONFLICT: the key is bound to a different intent; CONFLICT: the mutation conflicts with the exact document structure (a fieldError names the fence).',
          ),
          '412': error('PRECONDITION_FAILED: stale Service-If-Revision; read, replan, resend with the new revision.'),
          '428': error('PRECONDITION_REQUIRED: Service-If-Revision is missing.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/research-jobs': {
      get: {
        operationId: 'listResearchJobs',
        tags: ['research'],
        summary: 'List research jobs',
        description: 'Jobs are visible only to the credential that created them. Newest updatedAt first.',
        security: researchRead,
        parameters: [prm('Limit'), prm('Cursor'), prm('XRequestId')],
        responses: {
          '200': ok('A page of job summaries.', 'ResearchJobPageEnvelope', {}, true),
          '400': bad('bad limit or cursor'),
          ...authedErrors(),
        },
      },
      post: {
        operationId: 'startResearchJob',
        tags: ['research'],
        summary: 'Start a research job (retired)',
        description:
          'Fresh hosted research is retired: a fresh start answers 410 FEATURE_RETIRED unless the embedding program installed a research runner. Account-wide credentials when spaceRef.kind is new-document; a document-bound credential must use its bound documentRef.',
        security: scopes(['inquiry:create', 'knowledge:propose', 'research:run']),
        parameters: [prm('IdempotencyKey'), prm('XRequestId')],
        requestBody: jsonBody('ResearchReportSpec'),
        responses: {
          '202': ok('Accepted: the job.', 'ResearchJobEnvelope', {}, true),
          '400': bad('bad body; IDEMPOTENCY_REQUIRED: missing Idempotency-Key'),
          '404': notFound('the target document is not visible'),
          '409': error('IDEMPOTENCY_CONFLICT: the key is bound to a different request.'),
          '410': error('FEATURE_RETIRED: fresh hosted research is retired; use your own agent with the document tools.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/research-jobs/{jobId}': {
      get: {
        operationId: 'getResearchJob',
        tags: ['research'],
        summary: 'Read a research job',
        description: 'The canonical job read; authoritative over events. artifacts.report is set once a report is staged.',
        security: researchRead,
        parameters: [prm('JobId'), prm('IfNoneMatch'), prm('XRequestId')],
        responses: {
          '200': ok('The job.', 'ResearchJobEnvelope', revisionHeaders, true),
          '304': notModified(true),
          '404': notFound('unknown job or one another credential created'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/research-jobs/{jobId}/events': {
      get: {
        operationId: 'listResearchJobEvents',
        tags: ['research'],
        summary: 'Read or follow the events of a job',
        description:
          'JSON form (default): a bounded monotonic page of at most 256 events after `after`. Stream form when Accept includes text/event-stream: opens with `retry: 5000`; frames `id: <eventId>`, `event: research-job`, `data: <ResearchJobEvent JSON>`; `: keep-alive` comments while idle; closes after a terminal event, 1024 events or 20 seconds; resume with Last-Event-ID.',
        security: researchRead,
        parameters: [prm('JobId'), prm('After'), prm('LastEventId'), prm('AcceptEvents'), prm('XRequestId')],
        responses: {
          '200': {
            description: 'A JSON page of events, or an event stream.',
            headers: authedHeaders({}, true),
            content: {
              'application/json': { schema: ref('ResearchJobEventPageEnvelope') },
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: 'Server-sent events; each data line is one ResearchJobEvent (#/components/schemas/ResearchJobEvent) as JSON.',
                },
              },
            },
          },
          '204': {
            description: 'Stream form for a terminal job with no events after the cursor: tells an EventSource client to stop reconnecting.',
            headers: authedHeaders({}, true),
          },
          '400': bad('after or Last-Event-ID is not one valid event cursor'),
          '404': notFound('unknown job'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/research-jobs/{jobId}/cancellations': {
      post: {
        operationId: 'cancelResearchJob',
        tags: ['research'],
        summary: 'Cancel a non-terminal research job',
        description: 'The body is exactly {"v":1}. A replay of the same successful cancellation key returns the terminal receipt.',
        security: scopes(['research:run']),
        parameters: [prm('JobId'), prm('IdempotencyKey'), prm('ServiceIfRevision'), prm('XRequestId')],
        requestBody: jsonBody('CancellationRequest'),
        responses: {
          '200': ok('The cancelled job and the cancellation receipt.', 'ResearchJobEnvelope', { 'Service-Revision': hdr('ServiceRevision') }, true),
          '400': bad('the body is not exactly {"v":1}; IDEMPOTENCY_REQUIRED: missing Idempotency-Key'),
          '404': notFound('unknown job'),
          '409': error('CONFLICT: the job is already terminal or the cancellation was rejected; IDEMPOTENCY_CONFLICT: key reused for another request.'),
          '412': error('PRECONDITION_FAILED: stale Service-If-Revision.'),
          '428': error('PRECONDITION_REQUIRED: Service-If-Revision is missing.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/research-jobs/{jobId}/report': {
      get: {
        operationId: 'getResearchJobReport',
        tags: ['research'],
        summary: 'Export the report of a job',
        description:
          'rich-json: the whole report document envelope (needs document:read as well); markdown: the loss-reported text projection (at most 256 loss issues). Maximum report size 760,000 bytes.',
        security: researchRead,
        parameters: [prm('JobId'), prm('ReportFormat'), prm('IfNoneMatch'), prm('XRequestId')],
        responses: {
          '200': {
            description: 'The report.',
            headers: authedHeaders({ ...revisionHeaders, 'X-Service-Markdown-Loss-Count': hdr('MarkdownLossCount') }, true),
            content: {
              'application/json': { schema: ref('ReportEnvelope') },
              'text/markdown': { schema: { type: 'string' } },
            },
          },
          '304': notModified(true),
          '400': bad('missing or bad format'),
          '404': notFound('unknown job'),
          '409': error(
            'REPORT_NOT_READY (retryable): the report is not staged yet; wait for Retry-After and poll the job until artifacts.report exists. CONFLICT: inconsistent report binding.',
            { 'Retry-After': hdr('RetryAfter') },
          ),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/proposals': {
      post: {
        operationId: 'submitProposal',
        tags: ['proposals'],
        summary: 'Submit a knowledge proposal (blocked standalone)',
        description:
          'A well-formed standalone request answers 409 AGENT_RUN_REQUIRED (requiredAction submit-through-research-job) without charging the budget; when the operator blocks the surface every authenticated request answers 503. A successful submission (through a research-job agent run) answers 201 with the ProposalSubmissionResult.',
        security: scopes(['knowledge:propose']),
        parameters: [prm('IdempotencyKey'), prm('XRequestId')],
        requestBody: jsonBody('ProposalRequest'),
        responses: {
          '201': ok('Submitted.', 'ProposalSubmissionEnvelope'),
          '400': bad('malformed proposal; IDEMPOTENCY_REQUIRED: missing Idempotency-Key'),
          '404': notFound('the given spaceRef is not visible'),
          '409': error('AGENT_RUN_REQUIRED: standalone submission needs a live research-job agent run; IDEMPOTENCY_CONFLICT.'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/public/artifacts/{kind}/{artifactId}/{revision}': {
      get: {
        operationId: 'getPublicArtifact',
        tags: ['public'],
        summary: 'Read a released public projection (anonymous)',
        description: 'The only anonymous operation. A public locator is not an access grant.',
        security: [],
        parameters: [prm('ArtifactKind'), prm('ArtifactId'), prm('ArtifactRevision'), prm('IfNoneMatch'), prm('XRequestId')],
        responses: {
          '200': {
            description: 'The released projection.',
            headers: { 'X-Request-Id': hdr('XRequestId'), ...revisionHeaders },
            content: { 'application/json': { schema: ref('PublicArtifactEnvelope') } },
          },
          '304': {
            description: 'Not modified since the If-None-Match ETag.',
            headers: { 'X-Request-Id': hdr('XRequestId'), ...revisionHeaders },
          },
          '400': {
            description: 'INVALID_REQUEST: kind, artifactId or revision malformed.',
            headers: { 'X-Request-Id': hdr('XRequestId') },
            content: errorJson,
          },
          '401': {
            description: 'AUTH_AMBIGUOUS: a bearer token and a browser session cookie together (refused before anything else, even here). No token is needed.',
            headers: { 'X-Request-Id': hdr('XRequestId') },
            content: errorJson,
          },
          '404': {
            description: 'NOT_FOUND: no released projection at that exact kind, identity and revision.',
            headers: { 'X-Request-Id': hdr('XRequestId') },
            content: errorJson,
          },
          '405': rsp('MethodNotAllowed'),
          '500': rsp('InternalError'),
          '503': rsp('Unavailable'),
        },
      },
    },
    '/api/v1/reviews/{reviewRef}': {
      get: {
        operationId: 'getReview',
        tags: ['reviews'],
        summary: 'Read review metadata (activation-blocked)',
        description: 'Activation-blocked by default: 503 to every authenticated request, no budget charged. The success body is not shown by the contract.',
        security: scopes(['review:read']),
        parameters: [prm('ReviewRef'), prm('XRequestId')],
        responses: {
          '200': ok('Review metadata.', 'OpaqueEnvelope'),
          '404': notFound('unknown review'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/search': {
      post: {
        operationId: 'search',
        tags: ['search'],
        summary: 'Search (activation-blocked)',
        description:
          'public:read when scope.kind is public; knowledge:read (exact-space) when scope.kind is space. Activation-blocked by default: 503, no budget charged.',
        security: scopes(['public:read'], ['knowledge:read']),
        parameters: [prm('XRequestId')],
        requestBody: jsonBody('SearchRequest'),
        responses: {
          '200': ok('Search results.', 'OpaqueEnvelope'),
          '400': bad('bad body'),
          ...authedErrors(),
        },
      },
    },
    '/api/v1/library': {
      post: {
        operationId: 'libraryCommand',
        tags: ['library'],
        summary: 'Run a library command',
        description:
          'Saves links, highlights, notes, reading state and file uploads; the body is a command discriminated by type. The idempotency key travels in the body as idempotencyKey (at least 16 characters). library:write, or library:read for the read commands (list, get, reader-page).',
        security: scopes(['library:write'], ['library:read']),
        parameters: [prm('XRequestId')],
        requestBody: jsonBody('LibraryCommand'),
        responses: {
          '200': ok('The command result.', 'OpaqueEnvelope'),
          '201': ok('A new item was stored (save-link, create-note, highlight, finish-upload).', 'OpaqueEnvelope'),
          '400': bad('bad command; a selection that does not match the saved text'),
          '404': notFound('unknown item or source'),
          '409': error('CONFLICT: stale expectedRevision or the current state does not allow the command.'),
          ...authedErrors(),
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        tags: ['meta'],
        summary: 'This OpenAPI document',
        security: [],
        responses: {
          '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      },
    },
  };
}

function build(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'knowledge-workspace',
      version: '1.0.0',
      summary: 'Agent-facing knowledge workspace API',
      description:
        'Private versioned documents changed by semantic block mutations, research jobs, knowledge proposals, released public artifacts and the link library. All JSON successes use the success envelope {data, meta, links?, receipt?}; all errors the error envelope {error, meta}. An unknown path under /api/v1 answers 404 NOT_FOUND; a known path with a method it lacks answers 405 METHOD_NOT_ALLOWED with Allow. Operator-only operations are omitted.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: [
      { name: 'auth' },
      { name: 'documents' },
      { name: 'research' },
      { name: 'proposals' },
      { name: 'public' },
      { name: 'reviews' },
      { name: 'search' },
      { name: 'library' },
      { name: 'meta' },
    ],
    security: [{ bearerAuth: [] }],
    paths: paths(),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>. Tokens read svc_agent_v1_scred_<24 hex>_<secret>; the role names of each operation are the scopes it needs (alternatives are listed separately).',
        },
      },
      schemas: componentSchemas(),
      parameters,
      headers,
      responses,
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

let cached: Json | null = null;
let cachedJson: string | null = null;

/**
 * The OpenAPI 3.1 document of the public API, built once and cached (deeply frozen).
 * @remarks Generated from the valibot schemas with @valibot/to-json-schema (draft 2020-12, recursive
 * Block and RichBlock through `$ref`s into components.schemas).
 */
export function buildOpenApi(): object {
  cached ??= deepFreeze(build());
  return cached;
}

/** {@link buildOpenApi} serialized once, for serving at /openapi.json. */
export function openApiJson(): string {
  cachedJson ??= JSON.stringify(buildOpenApi());
  return cachedJson;
}
