/**
 * The MCP tools and resource templates, generated from the contract (src/contract) and the published
 * OpenAPI document (so a tool's input schema is exactly what /openapi.json says the operation takes).
 * @module
 */
import type { AnyOperation } from '../../src/contract/define.ts';
import { buildOpenApi } from '../../src/contract/openapi.ts';
import { contractOperations } from '../../src/contract/operations.ts';

/** A JSON Schema object. */
export type JsonSchema = Record<string, unknown>;

/** One tool: an operation with its arguments as one JSON object. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  op: AnyOperation;
  /** Argument name → where it goes on the request (`tool`: read by the tool itself, never sent). */
  args: Map<string, { in: 'path' | 'query' | 'header' | 'tool'; wire: string }>;
  readOnly: boolean;
  /**
   * Whether a body of this tool carries its idempotency key inside (`idempotencyKey`, as library
   * commands do), read from the body schema: the tool fills one in when the caller gave none.
   */
  bodyTakesKey(body: unknown): boolean;
}

/** From a body schema: which bodies have an `idempotencyKey` field (all, none, or per `type` variant). */
function bodyKeyRule(schema: JsonSchema | undefined, components: Record<string, JsonSchema>): (body: unknown) => boolean {
  const resolve = (s: JsonSchema | undefined): JsonSchema | undefined =>
    typeof s?.$ref === 'string' ? resolve(components[s.$ref.slice('#/components/schemas/'.length)]) : s;
  const root = resolve(schema);
  const hasKey = (s: JsonSchema | undefined) => Boolean((resolve(s)?.properties as Record<string, unknown> | undefined)?.idempotencyKey);
  if (!root) return () => false;
  if (hasKey(root)) return () => true;
  const variants = (root.oneOf ?? root.anyOf) as JsonSchema[] | undefined;
  if (!variants) return () => false;
  const keyed = new Set<unknown>();
  for (const variant of variants) {
    const type = ((resolve(variant)?.properties as Record<string, { const?: unknown }> | undefined)?.type)?.const;
    if (type !== undefined && hasKey(variant)) keyed.add(type);
  }
  return (body) => typeof body === 'object' && body !== null && keyed.has((body as { type?: unknown }).type);
}

/** Header inputs a tool fills itself and never shows as arguments. */
const HIDDEN_HEADERS = new Set(['accept', 'ifNoneMatch']);

/** Headers a tool keeps for the caller: optional arguments, remembered by the session when omitted. */
const KEPT_HEADERS = new Set(['ifRevision', 'idempotencyKey', 'lastEventId']);

/** Arguments a tool reads itself (never sent to the API), per operation. */
const TOOL_ARGS: Readonly<Record<string, Record<string, JsonSchema>>> = {
  mutateDocument: {
    replan: {
      type: 'boolean',
      default: false,
      description: 'On a stale revision (412), re-read the document and send this same mutation against the current revision when every block it names still exists (at most twice). Default false: a stale revision is an error result.',
    },
  },
};

/** Extra guidance per operation, for the agent reading the tool list. */
const NOTES: Readonly<Record<string, string>> = {
  mutateDocument:
    'The tool keeps the document revision of your last read or write in this session (ifRevision may then be omitted) and the idempotency key of an intent (an identical call in this session is a retry of the same intent and is applied once). It keeps the contract\'s guards: with no revision given or remembered the result is an error PRECONDITION_REQUIRED, and when the document changed since that revision an error PRECONDITION_FAILED; both carry currentRevision and nothing is changed. Read the document again (getDocument format=blocks), check your plan, and call again with ifRevision=currentRevision. Only with replan=true does the tool, on PRECONDITION_FAILED, re-read the document itself and send the same mutation against the new revision when every block it names still exists.',
  cancelResearchJob: 'ifRevision may be omitted: the tool reads the job first. Body is {"v":1}.',
  listResearchJobEvents: 'Follow a job: the tool remembers the cursor per job, so calling it again returns the events since the last call; `terminal` tells when the job has ended.',
  getResearchJobReport: 'Export a report: format markdown (text) or rich-json (also needs document:read).',
  getDocument: 'format: rich-json (default), blocks (flat blocks with ids: best for planning mutations) or markdown.',
  libraryCommand: 'For the commands that take an idempotencyKey, one is added to the body when absent (the same one for an identical retry).',
};

type OpenApiDoc = { paths: Record<string, Record<string, OpenApiOperation>>; components: { schemas: Record<string, JsonSchema> } };
type OpenApiOperation = { parameters?: { name: string; in: string; description?: string; schema: JsonSchema; required?: boolean }[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } };

/** Copy `schema` with component refs pointing into `$defs`, and collect the components it needs. */
function localize(schema: JsonSchema, components: Record<string, JsonSchema>, defs: Record<string, JsonSchema>): JsonSchema {
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        if (!(name in defs)) {
          defs[name] = {};
          defs[name] = visit(components[name]) as JsonSchema;
        }
        out[k] = `#/$defs/${name}`;
      } else out[k] = visit(v);
    }
    return out;
  };
  return visit(schema) as JsonSchema;
}

function buildTool(op: AnyOperation, doc: OpenApiDoc): ToolSpec {
  const published = doc.paths[op.path]?.[op.method.toLowerCase()];
  if (!published) throw new Error(`${op.operationId} is not in the OpenAPI document`);
  const defs: Record<string, JsonSchema> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const args: ToolSpec['args'] = new Map();
  const byWire = new Map(Object.entries(op.input.headers ?? {}).map(([logical, def]) => [(def as { name: string }).name.toLowerCase(), logical]));
  for (const p of published.parameters ?? []) {
    if (p.in === 'header') {
      const logical = byWire.get(p.name.toLowerCase());
      if (logical === undefined || HIDDEN_HEADERS.has(logical)) continue;
      properties[logical] = { ...localize(p.schema, doc.components.schemas, defs), description: p.description ?? '' };
      args.set(logical, { in: 'header', wire: p.name.toLowerCase() });
      if (p.required && !KEPT_HEADERS.has(logical)) required.push(logical);
    } else if (p.in === 'path' || p.in === 'query') {
      properties[p.name] = { ...localize(p.schema, doc.components.schemas, defs), description: p.description ?? '' };
      args.set(p.name, { in: p.in, wire: p.name });
      if (p.required) required.push(p.name);
    }
  }
  const body = published.requestBody?.content['application/json']?.schema;
  if (body) {
    properties.body = localize(body, doc.components.schemas, defs);
    required.push('body');
  }
  if (op.input.bytes) {
    properties.bytesBase64 = { type: 'string', contentEncoding: 'base64', description: `${op.input.bytes.description} Base64; at most ${op.input.bytes.maxBytes} bytes once decoded.` };
    required.push('bytesBase64');
  }
  for (const [name, schema] of Object.entries(TOOL_ARGS[op.operationId] ?? {})) {
    properties[name] = schema;
    args.set(name, { in: 'tool', wire: name });
  }
  const inputSchema: ToolSpec['inputSchema'] = { type: 'object', properties, required, additionalProperties: false };
  if (Object.keys(defs).length) inputSchema.$defs = defs;
  const note = NOTES[op.operationId];
  return {
    name: op.operationId,
    title: op.summary,
    description: `${op.summary}. ${op.description}${note ? ` ${note}` : ''} (${op.method} ${op.path})`,
    inputSchema,
    op,
    args,
    readOnly: op.method === 'GET',
    bodyTakesKey: bodyKeyRule(body, doc.components.schemas),
  };
}

/** The name of the agent-tool form of save-link (decisions.md, "The library"). */
export const SAVE_LINK_TOOL = 'saveLink';

/**
 * The agent-tool form of save-link: `{ url, requestKey }`, where `requestKey` plays the part of the
 * library's `idempotencyKey` (same rules: 16-256 characters without control characters): the tool
 * sends the save-link command of the library operation, so the same save is stored.
 */
function saveLinkTool(library: AnyOperation): ToolSpec {
  return {
    name: SAVE_LINK_TOOL,
    title: 'Save a link to the library',
    description:
      'Saves a link to the library (captured in the background). requestKey is your key for this save: 16-256 characters without control characters; repeating a call with the same requestKey and url returns the same item instead of saving it twice, the same requestKey with another url is IDEMPOTENCY_CONFLICT. (POST /api/v1/library, type save-link)',
    inputSchema: {
      type: 'object',
      properties: {
        url: { type: 'string', maxLength: 2048, description: 'An absolute http or https URL without user name or password.' },
        requestKey: { type: 'string', minLength: 16, maxLength: 256, description: 'Your key for this save: 16-256 characters without control characters.' },
      },
      required: ['url', 'requestKey'],
      additionalProperties: false,
    },
    op: library,
    args: new Map(),
    readOnly: false,
    bodyTakesKey: () => false,
  };
}

/** The tools: every public operation except the OpenAPI document itself (a resource), and the save-link tool. */
export function buildTools(): ToolSpec[] {
  const doc = buildOpenApi() as OpenApiDoc;
  const operations = contractOperations.filter((op) => op.audience === 'public' && op.operationId !== 'getOpenApi');
  const library = operations.find((op) => op.operationId === 'libraryCommand');
  const tools = operations.map((op) => buildTool(op, doc));
  return library ? [...tools, saveLinkTool(library)] : tools;
}

/** A resource template: a public GET operation addressed as `kw://api/v1/...{?query}`. */
export interface ResourceTemplateSpec {
  name: string;
  title: string;
  uriTemplate: string;
  description: string;
  op: AnyOperation;
  /** Matches a `kw://` URI's path (query stripped) of this operation. */
  pattern: RegExp;
}

/** The scheme and authority of resource URIs; the rest is the API path and query. */
export const RESOURCE_PREFIX = 'kw:/';

/** Every public GET operation as a resource template. */
export function buildResourceTemplates(): ResourceTemplateSpec[] {
  return contractOperations
    .filter((op) => op.audience === 'public' && op.method === 'GET')
    .map((op) => {
      const query = Object.keys(op.input.query ?? {});
      const pattern = new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}$`);
      return {
        name: op.operationId,
        title: op.summary,
        uriTemplate: `${RESOURCE_PREFIX}${op.path}${query.length ? `{?${query.join(',')}}` : ''}`,
        description: op.description,
        op,
        pattern,
      };
    });
}
