/**
 * Inputs checked at the edge: every path, query and header value an operation declares is read by
 * its wire name, decoded, checked with its contract schema and handed to the binding as a typed value
 * by its logical name. A value outside its schema is 400 INVALID_REQUEST naming the wire field
 * (`query.limit`, `Idempotency_Key`, `path.revision`); a malformed id in the path is 404 NOT_FOUND,
 * indistinguishable from an unknown one. A missing value is left to the domain (it decides between
 * 400, 428 and a default).
 * @module
 */
import * as v from 'valibot';
import type { AnyOperation, OperationInput, ParamDef } from '../contract/define.ts';
import { wireFieldNames } from '../contract/define.ts';
import { ServiceError, invalid, type FieldError } from '../errors.ts';
import { queryParam } from './http-util.ts';

/** Reads one operation's inputs from a request; `wireNames` maps logical names to wire field names. */
export type InputReader = ((params: Record<string, string>, query: string, headers: Record<string, string>, path: string) => OperationInput) & {
  wireNames: ReadonlyMap<string, string>;
};

const INTEGER = /^-?\d{1,16}$/;

interface Slot {
  logical: string;
  /** Header name in lowercase, query or path parameter name. */
  wire: string;
  /** How the value is named in messages: `Idempotency-Key`, `query parameter limit`. */
  shown: string;
  def: ParamDef;
  /** True for a plain string schema: nothing to check. */
  plain: boolean;
  /** The one pattern of a `string` + `regex` schema: a value it matches is valid as it is. */
  pattern: RegExp | null;
}

/** The regex of a schema that is a string checked by one regex alone (descriptions aside), else null. */
function onlyPattern(def: ParamDef): RegExp | null {
  const schema = def.schema as { type: string; pipe?: readonly { kind: string; type: string; requirement?: unknown }[] };
  if (schema.type !== 'string' || def.decode !== undefined || schema.pipe === undefined) return null;
  let re: RegExp | null = null;
  for (const item of schema.pipe.slice(1)) {
    if (item.kind === 'metadata') continue;
    if (item.type !== 'regex' || re !== null || !(item.requirement instanceof RegExp) || item.requirement.global || item.requirement.sticky) return null;
    re = item.requirement;
  }
  return re;
}

function slots(defs: Readonly<Record<string, ParamDef & { name?: string }>> | undefined, where: 'path' | 'query' | 'header'): Slot[] {
  return Object.entries(defs ?? {}).map(([logical, def]) => ({
    logical,
    wire: where === 'header' ? def.name!.toLowerCase() : logical,
    shown: where === 'header' ? def.name! : `${where} parameter ${logical}`,
    def,
    plain: def.schema.type === 'string' && !('pipe' in def.schema) && def.decode === undefined,
    pattern: onlyPattern(def),
  }));
}

/** The typed value of `raw`, or the message of why it is not one. */
function check(slot: Slot, raw: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const def = slot.def;
  let input: unknown = raw;
  if (def.decode === 'integer') {
    if (!INTEGER.test(raw)) return { ok: false, message: def.message ?? 'must be an integer' };
    input = Number(raw);
  }
  const result = v.safeParse(def.schema, input);
  if (result.success) return { ok: true, value: result.output };
  return { ok: false, message: def.message ?? result.issues[0].message };
}

/** Compile the reader of one operation's inputs. */
export function compileInputs(op: AnyOperation): InputReader {
  const path = slots(op.input.path, 'path');
  const query = slots(op.input.query, 'query');
  const header = slots(op.input.headers, 'header');
  const read = ((params: Record<string, string>, rawQuery: string, headers: Record<string, string>, urlPath: string): OperationInput => {
    let errors: FieldError[] | null = null;
    const fail = (slot: Slot, message: string) => (errors ??= []).push({ field: slot.logical, message });
    const p: Record<string, unknown> = {};
    for (const slot of path) {
      const raw = params[slot.logical]!;
      if (slot.plain || (slot.pattern !== null && slot.pattern.test(raw))) {
        p[slot.logical] = raw;
        continue;
      }
      const out = check(slot, raw);
      if (out.ok) p[slot.logical] = out.value;
      else if ((slot.def.malformed ?? 'not-found') === 'not-found') {
        throw new ServiceError('NOT_FOUND', `Nothing exists at ${urlPath.length > 200 ? `${urlPath.slice(0, 200)}…` : urlPath}: it names no ${slot.logical}.`);
      } else fail(slot, out.message);
    }
    const q: Record<string, unknown> = {};
    for (const slot of query) {
      const raw = queryParam(rawQuery, slot.wire);
      if (raw === undefined) {
        q[slot.logical] = slot.def.default;
        continue;
      }
      const out = check(slot, raw);
      if (out.ok) q[slot.logical] = out.value;
      else fail(slot, out.message);
    }
    const h: Record<string, unknown> = {};
    for (const slot of header) {
      const raw = headers[slot.wire];
      if (raw === undefined || (raw === '' && slot.def.emptyIsAbsent)) {
        h[slot.logical] = slot.def.default;
        continue;
      }
      if (slot.plain || (slot.pattern !== null && slot.pattern.test(raw))) {
        h[slot.logical] = raw;
        continue;
      }
      const out = check(slot, raw);
      if (out.ok) h[slot.logical] = out.value;
      else fail(slot, out.message);
    }
    if (errors !== null) {
      const list: FieldError[] = errors;
      const first = [...path, ...query, ...header].find((s) => s.logical === list[0]!.field)!;
      throw invalid(`${first.shown} ${list[0]!.message}.`, list);
    }
    return { path: p, query: q, headers: h, body: undefined, bytes: undefined } as OperationInput;
  }) as InputReader;
  read.wireNames = wireFieldNames(op.input);
  return read;
}
