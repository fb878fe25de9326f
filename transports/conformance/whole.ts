/**
 * API scenarios (see ./suite.ts): Checks over every answer the suite saw; registered last.
 * @module
 */
import * as assert from 'uvu/assert';
import { F, envelopeProblems, isEnvelopeReply, isObject } from './client.ts';
import type { Kit, Suite } from './scenario-kit.ts';


/** Register these scenarios on the suite. */
export function wholeSuiteScenarios(s: Suite, k: Kit): void {
  const { c } = k;

  // ---- whole-suite checks (keep last) -------------------------------------------------------

  s('every /api/v1 JSON answer seen in this suite had a well-formed envelope', () => {
    const problems: string[] = [];
    for (const r of c.seen) {
      if (!isEnvelopeReply(r)) continue;
      const p = envelopeProblems(r);
      if (p.length) problems.push(`${r.method} ${r.path} ${r.status}: ${p.join('; ')}`);
    }
    assert.equal(problems.slice(0, 20), [], `${problems.length} malformed envelopes`);
  });

  s('every /api/v1 JSON answer seen in this suite matches the published OpenAPI response schema', async () => {
    const spec = (await c.call('GET', '/openapi.json')).json;
    assert.ok(isObject(spec?.paths), 'the OpenAPI document has paths');
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
    ajv.addSchema({ ...spec, $id: 'https://scenario.invalid/openapi.json' });
    const templates = Object.keys(spec.paths).map((t) => {
      const full = t.startsWith('/api/v1') || t === '/openapi.json' ? t : `/api/v1${t}`;
      return { t, re: new RegExp(`^${full.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
    });
    const escape = (x: string) => x.replace(/~/g, '~0').replace(/\//g, '~1');
    const problems: string[] = [];
    const checked = new Set<string>();
    for (const r of c.seen) {
      if (!isEnvelopeReply(r)) continue;
      const path = r.path.split('?')[0]!;
      const match = templates.find((x) => x.re.test(path));
      if (!match) continue; // unknown paths have no operation
      const op = spec.paths[match.t]?.[r.method.toLowerCase()];
      if (!op) continue; // 405s
      const status = String(r.status);
      const key = op.responses?.[status] ? status : op.responses?.[`${status[0]}XX`] ? `${status[0]}XX` : op.responses?.default ? 'default' : null;
      if (key === null) {
        problems.push(`${r.method} ${match.t}: status ${status} is not declared`);
        continue;
      }
      let response = op.responses[key];
      if (typeof response.$ref === 'string') {
        const name = response.$ref.split('/').pop();
        response = spec.components?.responses?.[name] ?? response;
      }
      const media = response.content?.['application/json'] ?? Object.entries(response.content ?? {}).find(([k]) => /json/.test(k))?.[1];
      if (!media?.schema) continue;
      const pointer = typeof op.responses[key].$ref === 'string'
        ? `${op.responses[key].$ref}/content/application~1json/schema`
        : `#/paths/${escape(match.t)}/${r.method.toLowerCase()}/responses/${escape(key)}/content/application~1json/schema`;
      const validate = ajv.getSchema(`https://scenario.invalid/openapi.json${pointer}`);
      if (!validate) {
        problems.push(`${r.method} ${match.t} ${status}: schema ${pointer} not resolvable`);
        continue;
      }
      checked.add(`${r.method} ${match.t} ${status}`);
      if (!validate(r.json)) problems.push(`${r.method} ${r.path} ${status}: ${ajv.errorsText(validate.errors).slice(0, 300)}`);
    }
    assert.ok(checked.size >= 10, `validated ${checked.size} operation/status pairs`);
    assert.equal([...new Set(problems)].slice(0, 15), [], `${problems.length} answers disagree with the published OpenAPI document`);
  });

  s('every 429 and 503 answer seen in this suite carried Retry-After', () => {
    const missing = c.seen.filter((r) => (r.status === 429 || r.status === 503) && !r.headers.get('retry-after')).map((r) => `${r.method} ${r.path} ${r.status}`);
    assert.equal(missing, []);
    assert.ok(c.seen.some((r) => r.status === 429) && c.seen.some((r) => r.status === 503), 'the suite exercised both 429 and 503');
  });

  s('every /api/v1 answer seen in this suite had a server-minted X-Request-Id', () => {
    const missing = c.seen
      .filter((r) => r.path.startsWith('/api/v1'))
      .filter((r) => !F.requestId.test(r.headers.get('x-request-id') ?? ''))
      .map((r) => `${r.method} ${r.path} ${r.status}`);
    assert.equal(missing.slice(0, 20), [], `${missing.length} answers without a well-formed X-Request-Id`);
  });
}
