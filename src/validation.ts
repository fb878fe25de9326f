/**
 * valibot results as data: issues become the contract's fieldErrors.
 * @module
 */
import * as v from 'valibot';
import { ServiceError, type FieldError } from './errors.ts';

const SEGMENT = /^[A-Za-z0-9_]+$/;

/** The contract's field pattern: `$`, or dot-separated names of letters, digits, underscores. */
export function fieldPath(path: readonly (string | number)[], prefix?: string): string {
  const parts: string[] = prefix ? [prefix] : [];
  for (const key of path) {
    const s = String(key);
    parts.push(SEGMENT.test(s) ? s : s.replace(/[^A-Za-z0-9_]/g, '_') || '_');
  }
  return parts.length ? parts.join('.').slice(0, 256) : '$';
}

function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === 'schema' && issue.type === 'strict_object' && issue.expected === 'never') {
    return 'unknown field: no other fields are allowed here';
  }
  if (issue.kind === 'schema' && issue.input === undefined && issue.received === 'undefined') return 'is required';
  // A variant's discriminator without a message of its own: name the values it takes, as picklists do.
  if (issue.kind === 'schema' && issue.type === 'variant' && issue.message.startsWith('Invalid ')) {
    return `must be one of ${issue.expected?.replace(/["()]/g, '').split(' | ').join(', ') ?? 'the listed values'}`;
  }
  return issue.message;
}

/** Convert valibot issues (including nested ones of unions/variants) to fieldErrors. */
export function issuesToFieldErrors(issues: readonly v.BaseIssue<unknown>[], prefix?: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const path = (issue.path ?? []).map((p) => (p as { key: unknown }).key as string | number);
    const field = fieldPath(path, prefix);
    const message = issueMessage(issue);
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
    if (out.length >= 32) break;
  }
  return out;
}

/**
 * Parse `input` with `schema`, or throw INVALID_REQUEST whose fieldErrors name each offending field.
 * @param what names the input in the message, e.g. "request body".
 */
export function parseOrThrow<TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  what = 'request body',
  prefix?: string,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const fieldErrors = issuesToFieldErrors(result.issues, prefix);
  const first = fieldErrors[0];
  throw new ServiceError(
    'INVALID_REQUEST',
    `The ${what} does not match the schema${first ? `: ${first.field} ${first.message}` : ''}.`,
    { fieldErrors },
  );
}
