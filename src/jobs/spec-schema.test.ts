import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { isServiceError } from '../errors.ts';
import { canonicalJson } from '../canonical-json.ts';
import { utf8Length } from '../text.ts';
import { AcceptanceLimits, parseSpec } from './spec-schema.ts';
import { CancellationRequestSchema, ResearchJobEventPageSchema, ResearchJobEventSchema, ResearchJobPageSchema, ResearchJobSchema, ResearchReportSpecSchema } from './schemas.ts';
import { specBody } from './jobs-kit.ts';

const requirement = (i = 0) => ({
  claimClass: 'direct-answer',
  requirement: `Answer the question directly, part ${i}.`,
  providerRecovery: { anchor: 'answer', requiresConfidencePoint: false, v: 1 },
});
const acceptance = (extra: Record<string, unknown> = {}) => ({ revision: 3, v: 1, coverageRequirements: [requirement()], ...extra });

function fieldsOf(body: unknown): string[] {
  try {
    parseSpec(body);
  } catch (e) {
    if (isServiceError(e) && e.code === 'INVALID_REQUEST') return (e.fieldErrors ?? []).map((f) => f.field);
    throw e;
  }
  throw new Error('expected INVALID_REQUEST');
}

test('a complete spec with a full acceptance contract is accepted and kept as sent (findingChecks included)', () => {
  const body = specBody({
    acceptance: acceptance({
      asOf: { date: '2026-01-31', coverageRequirementIndex: 0, v: 1 },
      confidence: { scale: 'zero-to-one', coverageRequirementIndex: 0, v: 1 },
      termGroups: [{ key: 'crdt-merge', coverageRequirementIndex: 0, memberMode: 'all', members: [{ aliases: ['join', 'merge'], v: 1 }], v: 1 }],
      ratioPercentChecks: [{ coverageRequirementIndex: 0, numerator: '1', denominator: '4', percentHundredths: 2500, scope: 'same-authored-block', v: 1 }],
      requestedVisibleBodyWords: { minimum: 100, maximum: 900 },
      requiredSources: [{ id: 's1', familyKey: 'shapiro', locator: 'https://hal.inria.fr/inria-00555588', version: '1', sourceRole: 'primary-peer-reviewed', coverageRequirementIndices: [0], v: 1 }],
      findingChecks: { custom: { deep: [1, 2] } },
    }),
  });
  const spec = parseSpec(body);
  assert.equal(spec, body);
});

test('each bound of the spec is enforced with a field error naming the field', () => {
  assert.equal(fieldsOf(specBody({ extra: 1 })), ['extra']);
  assert.equal(fieldsOf(specBody({ question: 'x'.repeat(16_385) })), ['question']);
  assert.ok(parseSpec(specBody({ question: '\u{1F600}'.repeat(16_384) })), '16384 code points fit although UTF-16 counts twice');
  assert.equal(fieldsOf(specBody({ profile: 'broad' })), ['profile']);
  assert.equal(fieldsOf(specBody({ visibilityIntent: 'public' })), ['visibilityIntent']);
  assert.equal(fieldsOf(specBody({ deliverable: { kind: 'report', form: 'essay', language: 'en' } })), ['deliverable.form']);
  assert.equal(fieldsOf(specBody({ deliverable: { kind: 'report', form: 'question-answer', language: 'EN' } })), ['deliverable.language']);
  assert.equal(fieldsOf(specBody({ spaceRef: { kind: 'new-document', title: 't'.repeat(1025) } })), ['spaceRef.title']);
  assert.equal(fieldsOf(specBody({ spaceRef: { kind: 'document', documentRef: 'sdoc_123' } })), ['spaceRef.documentRef']);
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ revision: 2 }) })), ['acceptance.revision']);
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ coverageRequirements: [] }) })), ['acceptance.coverageRequirements']);
  const many = Array.from({ length: 17 }, (_, i) => requirement(i));
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ coverageRequirements: many }) })), ['acceptance.coverageRequirements']);
  assert.equal(
    fieldsOf(specBody({ acceptance: acceptance({ coverageRequirements: [{ ...requirement(), requirement: 'too short' }] }) })),
    ['acceptance.coverageRequirements.0.requirement'],
  );
  const group = { key: 'a'.repeat(81), coverageRequirementIndex: 0, memberMode: 'all', members: [{ aliases: ['x'], v: 1 }], v: 1 };
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ termGroups: [group] }) })), ['acceptance.termGroups.0.key']);
  const ratio = { coverageRequirementIndex: 0, numerator: '1'.repeat(19), denominator: '4', percentHundredths: 10_001, scope: 'same-authored-block', v: 1 };
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ ratioPercentChecks: [ratio] }) })), [
    'acceptance.ratioPercentChecks.0.numerator',
    'acceptance.ratioPercentChecks.0.percentHundredths',
  ]);
  const nineRatios = Array.from({ length: 9 }, () => ({ ...ratio, numerator: '1', percentHundredths: 1 }));
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ ratioPercentChecks: nineRatios }) })), ['acceptance.ratioPercentChecks']);
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ requestedVisibleBodyWords: { minimum: 500, maximum: 100 } }) })), [
    'acceptance.requestedVisibleBodyWords.maximum',
  ]);
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ requestedVisibleBodyWords: { minimum: 1, maximum: 20_001 } }) })), [
    'acceptance.requestedVisibleBodyWords.maximum',
  ]);
});

test('coverage indices must name an existing coverage requirement', () => {
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ confidence: { scale: 'zero-to-one', coverageRequirementIndex: 1, v: 1 } }) })), [
    'acceptance.confidence.coverageRequirementIndex',
  ]);
  assert.equal(fieldsOf(specBody({ acceptance: acceptance({ asOf: { date: '2026-01-01', coverageRequirementIndex: 16, v: 1 } }) })), [
    'acceptance.asOf.coverageRequirementIndex',
  ]);
});

test('the acceptance contract is limited to 32768 canonical UTF-8 bytes, reported on the field "acceptance"', () => {
  const sized = (bytes: number) => {
    const base = acceptance({ findingChecks: { pad: '' } });
    const overhead = utf8Length(canonicalJson(base));
    return acceptance({ findingChecks: { pad: 'a'.repeat(bytes - overhead) } });
  };
  const atLimit = sized(AcceptanceLimits.maxBytes);
  assert.is(utf8Length(canonicalJson(atLimit)), 32_768);
  assert.ok(parseSpec(specBody({ acceptance: atLimit })));
  const over = sized(AcceptanceLimits.maxBytes + 1);
  assert.equal(fieldsOf(specBody({ acceptance: over })), ['acceptance']);
  // Multi-byte characters count in bytes, not characters.
  const wide = acceptance({ findingChecks: { pad: '\u00e9'.repeat(16_400) } });
  assert.equal(fieldsOf(specBody({ acceptance: wide })), ['acceptance']);
});

test('canonicalJson sorts keys at every level and drops undefined', () => {
  assert.is(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined, x: 'é' }], c: null } }), '{"a":{"c":null,"d":[2,{"x":"é","z":1}]},"b":1}');
});

test('the job and event schemas accept what the contract requires and refuse a bad event kind', () => {
  const job = {
    v: 1,
    jobId: `kjob_${'a'.repeat(48)}`,
    state: 'failed',
    phase: 'retrieving',
    progress: { percent: 10, summary: 'x' },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:01.000Z',
    error: { code: 'JOB_FAILED', message: 'no sources', retryable: false },
    requiredAction: null,
    missingEvidence: [],
    artifacts: { document: null, inquiry: null, proposal: null, review: null, report: null, publicArtifacts: [] },
    spec: specBody(),
    researchAuditDiagnostic: { v: 1, acceptedDecisionCount: 0, admittedSourceCount: 0, attempt: 0, coverageState: 'open', defectCount: 0, repairKeyCount: 0, selectedSourceCount: 0 },
  };
  assert.ok(v.is(ResearchJobSchema, job));
  assert.not.ok(v.is(ResearchJobSchema, { ...job, researchAuditDiagnostic: { ...job.researchAuditDiagnostic, attempt: 3 } }));
  const event = { v: 1, eventId: '1', jobId: job.jobId, kind: 'job.created', state: 'queued', phase: 'queued', progress: job.progress, createdAt: job.createdAt };
  assert.ok(v.is(ResearchJobEventSchema, event));
  assert.not.ok(v.is(ResearchJobEventSchema, { ...event, kind: 'job.started' }));
  assert.not.ok(v.is(ResearchJobEventSchema, { ...event, eventId: '01' }));
});

test('every jobs schema has a JSON Schema form (the OpenAPI document is generated from them)', () => {
  for (const schema of [ResearchReportSpecSchema, ResearchJobSchema, ResearchJobPageSchema, ResearchJobEventSchema, ResearchJobEventPageSchema, CancellationRequestSchema]) {
    const json = toJsonSchema(schema as never, { errorMode: 'throw', target: 'draft-2020-12' }) as { type?: string };
    assert.is(json.type, 'object');
  }
});

test.run();
