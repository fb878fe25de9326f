/**
 * Bounds the published OpenAPI document states for every value (issue 29 item 9; OWASP API4 "limit"
 * rules): bounds the schemas already imply, written out where JSON Schema readers look for them.
 * - An integer is a JavaScript safe integer (every one the service reads or writes): `format: int64`.
 * - A string whose `pattern` is anchored at both ends and admits only finitely long matches gets the
 *   longest length it admits as `maxLength` (an id such as `^sdoc_[a-f0-9]{48}$`: 53).
 * Nothing here invents a bound: a value the schemas leave unbounded stays so, and the lint test
 * (scripts/openapi-lint.test.ts) names it, so its bound is given where the contract or decisions.md
 * fixes it (in the valibot schema the server validates with, or for headers and text bodies, in
 * openapi.ts).
 * @module
 */
import { MAX_REQUEST_BODY, MAX_RESPONSE_BODY } from '../limits.ts';

type Json = Record<string, unknown>;

/** Longest match of a regular expression's source, or Infinity (unbounded, or a form not understood). */
export function regexMaxLength(source: string): number {
  let i = 0;
  // alternation := sequence ('|' sequence)*
  function alternation(): number {
    let best = sequence();
    while (source[i] === '|') {
      i++;
      best = Math.max(best, sequence());
    }
    return best;
  }
  function sequence(): number {
    let total = 0;
    while (i < source.length && source[i] !== '|' && source[i] !== ')') {
      const one = atom();
      total += quantified(one);
    }
    return total;
  }
  function atom(): number {
    const c = source[i]!;
    if (c === '^' || c === '$') {
      i++;
      return 0;
    }
    if (c === '(') {
      i++;
      if (source[i] === '?') {
        if (source[i + 1] === ':') i += 2;
        else throw new Error('lookaround'); // lookarounds and named groups: not understood
      }
      const inner = alternation();
      if (source[i] !== ')') throw new Error('unclosed group');
      i++;
      return inner;
    }
    if (c === '[') {
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      if (source[i] !== ']') throw new Error('unclosed class');
      i++;
      return 1;
    }
    if (c === '\\') {
      const next = source[i + 1];
      if (next === 'b' || next === 'B') {
        i += 2;
        return 0;
      }
      if (next === 'u') i += source[i + 2] === '{' ? source.indexOf('}', i) + 1 - i : 6;
      else if (next === 'x') i += 4;
      else if (next !== undefined && /[1-9k]/.test(next)) throw new Error('backreference');
      else i += 2;
      return 1;
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') throw new Error('dangling quantifier');
    i++;
    return 1;
  }
  function quantified(one: number): number {
    const c = source[i];
    let max = 1;
    if (c === '*' || c === '+') {
      i++;
      max = Infinity;
    } else if (c === '?') {
      i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
      if (!m) return one; // a literal brace
      i += m[0].length;
      max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
    } else {
      return one;
    }
    if (source[i] === '?') i++; // lazy
    return one === 0 ? 0 : one * max;
  }
  try {
    const length = alternation();
    return i === source.length ? length : Infinity;
  } catch {
    return Infinity;
  }
}

/** Anchored at both ends (each alternative of a top-level alternation too): its matches are whole strings. */
function anchored(pattern: string): boolean {
  return pattern.startsWith('^') && pattern.endsWith('$') && !pattern.endsWith('\\$') && !/^\^.*\$\|/.test(pattern);
}

function isType(schema: Json, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

/** The document with the implied bounds written out (a new tree; the input is not changed). */
export function withImpliedBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withImpliedBounds(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value as Json)) out[key] = withImpliedBounds(child);
  if (isType(out, 'integer') && out.format === undefined) out.format = 'int64';
  if (isType(out, 'string') && out.maxLength === undefined && out.enum === undefined && out.const === undefined && typeof out.pattern === 'string' && anchored(out.pattern)) {
    const max = regexMaxLength(out.pattern);
    if (Number.isFinite(max)) out.maxLength = max;
  }
  return out as T;
}

/** The bounds every message of the HTTP API has, whatever it carries (src/limits.ts, node:http). */
export const MESSAGE_BOUNDS = {
  /** A request body: at most MAX_REQUEST_BODY bytes, so no string in it is longer, no array has more items than half of it. */
  requestBody: MAX_REQUEST_BODY,
  /** Node's limit of a request's line and headers together (`maxHeaderSize`, 16 KiB; 431 past it): path, query and header values. */
  requestHead: 16 * 1024,
  /** Every JSON or text answer: at most MAX_RESPONSE_BODY bytes (larger reads answer 413). */
  responseBody: MAX_RESPONSE_BODY,
} as const;

type Side = 'request' | 'head' | 'response';

/**
 * Fill in, for every string, array and integer the schemas leave unbounded, the bound of the message
 * that carries it ({@link MESSAGE_BOUNDS}): a string is no longer than its message, an array has no more
 * items than half its message's bytes (an item and a comma take at least two), an integer is a safe
 * integer. A component used by any answer takes the answer's bound (the larger), else the request's.
 */
export function withMessageBounds(doc: Json): Json {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  // Which components each side reaches, through $refs (transitively).
  const reach = (roots: unknown[]): Set<string> => reachedSchemas(schemas, roots);
  const requestRoots: unknown[] = [];
  const responseRoots: unknown[] = [(doc.components as Json | undefined)?.responses, (doc.components as Json | undefined)?.headers];
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      requestRoots.push(op.requestBody, op.parameters);
      responseRoots.push(op.responses);
    }
  }
  const answered = reach(responseRoots);

  const limitOf = (side: Side) => (side === 'request' ? MESSAGE_BOUNDS.requestBody : side === 'head' ? MESSAGE_BOUNDS.requestHead : MESSAGE_BOUNDS.responseBody);
  const fill = (value: unknown, side: Side): unknown => {
    if (Array.isArray(value)) return value.map((item) => fill(item, side));
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [key, child] of Object.entries(value as Json)) out[key] = fill(child, side);
    const limit = limitOf(side);
    if (isType(out, 'string') && out.maxLength === undefined && out.enum === undefined && out.const === undefined) out.maxLength = limit;
    if (isType(out, 'array') && out.maxItems === undefined) out.maxItems = Math.floor(limit / 2);
    if (isType(out, 'integer')) {
      if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = Number.MIN_SAFE_INTEGER;
      if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = Number.MAX_SAFE_INTEGER;
    }
    return out;
  };
  const paths: Json = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    const ops: Json = {};
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      ops[method] = { ...op, parameters: fill(op.parameters, 'head'), ...(op.requestBody ? { requestBody: fill(op.requestBody, 'request') } : {}), responses: fill(op.responses, 'response') };
    }
    paths[path] = ops;
  }
  const components = (doc.components ?? {}) as Json;
  const filledSchemas: Json = {};
  for (const [name, schema] of Object.entries(schemas)) filledSchemas[name] = fill(schema, answered.has(name) ? 'response' : 'request');
  return {
    ...doc,
    paths,
    components: { ...components, schemas: filledSchemas, headers: fill(components.headers, 'response'), responses: fill(components.responses, 'response') },
  };
}

/**
 * The document without component schemas nothing refers to (the operator API's, which the published
 * document omits): every component left is reached from a path or a shared response or header.
 */
export function withoutUnusedSchemas(doc: Json): Json {
  const components = (doc.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Record<string, Json>;
  const used = reachedSchemas(schemas, [doc.paths, components.responses, components.headers]);
  return { ...doc, components: { ...components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))) } };
}

/** The component schemas `roots` reach through `$ref`s, transitively. */
function reachedSchemas(schemas: Record<string, Json>, roots: unknown[]): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const r = (value as Json).$ref;
    if (typeof r === 'string' && r.startsWith('#/components/schemas/')) {
      const name = r.slice('#/components/schemas/'.length);
      if (!seen.has(name)) {
        seen.add(name);
        visit(schemas[name]);
      }
    }
    for (const child of Object.values(value as Json)) visit(child);
  };
  roots.forEach(visit);
  return seen;
}
