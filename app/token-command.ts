/**
 * `kw token create`: create a credential through the operator API of a running server.
 * @module
 */
import { KW, parseFlags, parseInteger, UsageError } from './usage.ts';
import type { CliIO } from './serve-command.ts';

const HELP = `${KW} token create --help`;

/** Run `kw token create`; resolves with the exit code (0 created, 1 refused or unreachable). */
export async function runTokenCreate(args: string[], io: CliIO): Promise<number> {
  const { values } = parseFlags(
    args,
    {
      url: { type: 'string' },
      'operator-key': { type: 'string' },
      scopes: { type: 'string' },
      account: { type: 'string' },
      document: { type: 'string' },
      budget: { type: 'string' },
      'expires-in-days': { type: 'string' },
      label: { type: 'string' },
      json: { type: 'boolean' },
    },
    HELP,
  );
  const operatorKey = values['operator-key'] || process.env.KW_OPERATOR_KEY;
  if (!values.url) throw new UsageError('--url is required', HELP);
  if (!operatorKey) throw new UsageError('--operator-key is required', HELP);
  if (!values.scopes) throw new UsageError('--scopes is required', HELP);
  let base: URL;
  try {
    base = new URL(values.url!);
  } catch {
    throw new UsageError(`--url must be an absolute URL such as http://127.0.0.1:8787, not "${values.url}"`, HELP);
  }
  const scopes = values.scopes!.split(',').map((s) => s.trim()).filter(Boolean);
  if (!scopes.length) throw new UsageError('--scopes must list at least one scope', HELP);
  const body: Record<string, unknown> = { label: values.label ?? 'kw token create', scopes };
  if (values.account !== undefined) body.account = values.account;
  if (values.document !== undefined) body.documentRef = values.document;
  if (values.budget !== undefined) body.requestBudget = parseInteger('--budget', values.budget, 1, 10_000, HELP);
  if (values['expires-in-days'] !== undefined) body.expiresInDays = parseInteger('--expires-in-days', values['expires-in-days'], 1, 90, HELP);

  const endpoint = new URL('operator/v1/credentials', base.href.endsWith('/') ? base.href : `${base.href}/`);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    io.err(`kw: could not reach ${endpoint.href}: ${String((error as Error).cause ?? (error as Error).message)} (is "${KW} serve" running there?)`);
    return 1;
  }
  const text = await response.text();
  let json: { data?: Record<string, unknown>; error?: { code?: string; message?: string; fieldErrors?: { field: string; message: string }[] } };
  try {
    json = JSON.parse(text);
  } catch {
    io.err(`kw: ${response.status} from ${endpoint.href}: not JSON`);
    return 1;
  }
  if (!response.ok || !json.data) {
    const e = json.error;
    io.err(`kw: ${response.status} ${e?.code ?? ''}: ${e?.message ?? 'request failed'}`);
    for (const f of e?.fieldErrors ?? []) io.err(`    ${f.field}: ${f.message}`);
    return 1;
  }
  const data = json.data;
  if (values.json) {
    io.out(JSON.stringify(data));
    return 0;
  }
  io.out(`token: ${String(data.token)}`);
  for (const key of ['credentialRef', 'displayPrefix', 'label', 'scopes', 'documentRef', 'requestBudget', 'expiresAt']) {
    const value = data[key];
    if (value !== undefined && value !== null) io.out(`${key}: ${Array.isArray(value) ? value.join(',') : String(value)}`);
  }
  io.out('The token is shown once: store it now.');
  io.out(`Try: curl -H "Authorization: Bearer ${String(data.token)}" ${base.origin}${base.pathname.replace(/\/$/, '')}/api/v1/auth`);
  return 0;
}
