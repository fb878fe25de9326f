/**
 * The research request spec (ResearchReportSpec) with its optional acceptance contract, as valibot
 * schemas, and `parseSpec`, which also checks what a schema cannot: the 32,768-byte canonical size
 * of the acceptance contract and that every coverage index names an existing requirement.
 * @remarks Request bodies are closed (`strictObject`); strings count code points (`maxChars`).
 * Bounds the contract leaves open are not invented, except that strings naming something
 * (question, title, ids, aliases) must not be empty.
 * @module
 */
import * as v from 'valibot';
import { invalid, type FieldError } from '../errors.ts';
import { Patterns } from '../ids.ts';
import { maxChars } from '../documents/schemas.ts';
import { canonicalJson } from '../canonical-json.ts';
import { utf8Length } from '../text.ts';
import { LanguageSchema } from '../values.ts';
import { parseOrThrow } from '../validation.ts';

/** Limits of the acceptance contract. */
export const AcceptanceLimits = { maxBytes: 32_768, coverageRequirements: 16, termGroups: 16, ratioChecks: 8, requiredSources: 16 } as const;

const text = (min: number, max: number) =>
  v.pipe(v.string(), v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`), maxChars(max, `must be at most ${max} characters`));
const nonEmpty = v.pipe(v.string(), v.minLength(1, 'must not be empty'));
const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));
const list = <T extends v.GenericSchema>(item: T, min: number, max: number) =>
  v.pipe(v.array(item), v.minLength(min, `must have at least ${min} item${min === 1 ? '' : 's'}`), v.maxLength(max, `must have at most ${max} items`));
const CoverageIndex = int(0, 15);
const DigitString = v.pipe(v.string(), v.regex(/^[0-9]{1,18}$/, 'must be a non-negative integer string of up to 18 digits'));

const CoverageRequirementSchema = v.strictObject({
  claimClass: v.picklist(['comparison', 'counterevidence', 'definition', 'direct-answer', 'limitation', 'mechanism', 'quantitative', 'temporal-status']),
  requirement: text(12, 500),
  providerRecovery: v.strictObject({ anchor: text(1, 500), requiresConfidencePoint: v.boolean(), v: v.literal(1) }),
});

const TermGroupSchema = v.strictObject({
  key: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, 'must be lowercase words joined by hyphens'), v.maxLength(80, 'must be at most 80 characters')),
  coverageRequirementIndex: CoverageIndex,
  memberMode: v.literal('all'),
  members: list(v.strictObject({ aliases: list(nonEmpty, 1, 8), v: v.literal(1) }), 1, 8),
  v: v.literal(1),
});

const RatioCheckSchema = v.strictObject({
  coverageRequirementIndex: CoverageIndex,
  numerator: DigitString,
  denominator: DigitString,
  percentHundredths: int(0, 10_000),
  scope: v.literal('same-authored-block'),
  v: v.literal(1),
});

const RequiredSourceSchema = v.strictObject({
  id: nonEmpty,
  familyKey: nonEmpty,
  locator: text(1, 2048),
  version: v.pipe(v.string(), maxChars(160, 'must be at most 160 characters')),
  sourceRole: v.picklist(['first-party-technical', 'primary-peer-reviewed', 'primary-preprint', 'primary-supplement', 'secondary']),
  coverageRequirementIndices: list(CoverageIndex, 1, 16),
  v: v.literal(1),
});

/** minimum <= maximum (and asOf.date naming a real day) is checked by {@link parseSpec} (a cross-field check has no JSON Schema form). */
const WordsSchema = v.strictObject({ minimum: int(1, 20_000), maximum: int(1, 20_000) });

/** True for a YYYY-MM-DD that names a day of the calendar (2026-02-28 yes, 2026-02-30 no). */
export function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The optional acceptance contract (revision 3). */
export const AcceptanceContractSchema = v.strictObject({
  revision: v.literal(3),
  v: v.literal(1),
  asOf: v.optional(
    v.strictObject({
      date: v.pipe(v.string(), v.isoDate('must be a date YYYY-MM-DD')),
      coverageRequirementIndex: CoverageIndex,
      v: v.literal(1),
    }),
  ),
  confidence: v.optional(v.strictObject({ scale: v.literal('zero-to-one'), coverageRequirementIndex: CoverageIndex, v: v.literal(1) })),
  coverageRequirements: list(CoverageRequirementSchema, 1, AcceptanceLimits.coverageRequirements),
  termGroups: v.optional(list(TermGroupSchema, 1, AcceptanceLimits.termGroups)),
  ratioPercentChecks: v.optional(list(RatioCheckSchema, 0, AcceptanceLimits.ratioChecks)),
  requestedVisibleBodyWords: v.optional(WordsSchema),
  requiredSources: v.optional(list(RequiredSourceSchema, 0, AcceptanceLimits.requiredSources)),
  findingChecks: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description('Application-only finding checks, kept as sent.'))),
});

/** The request spec of a research job, stored as `job.spec`. */
export const ResearchReportSpecSchema = v.strictObject({
  v: v.literal(1),
  question: text(1, 16_384),
  profile: v.picklist(['focused', 'deep']),
  visibilityIntent: v.picklist(['private', 'request-publication']),
  deliverable: v.strictObject({
    kind: v.literal('report'),
    form: v.picklist(['evidence-review', 'literature-review', 'question-answer']),
    language: LanguageSchema,
  }),
  spaceRef: v.variant('kind', [
    v.strictObject({ kind: v.literal('new-document'), title: text(1, 1024) }),
    v.strictObject({ kind: v.literal('document'), documentRef: v.pipe(v.string(), v.regex(Patterns.documentRef, 'must be a documentRef (sdoc_ and 48 lowercase hex)')) }),
  ]),
  acceptance: v.optional(AcceptanceContractSchema),
});
export type ResearchReportSpec = v.InferOutput<typeof ResearchReportSpecSchema>;
export type AcceptanceContract = v.InferOutput<typeof AcceptanceContractSchema>;

/** Cross-field rules of the acceptance contract: coverage indices in range, word bounds ordered. */
function crossFieldErrors(a: AcceptanceContract): FieldError[] {
  const count = a.coverageRequirements.length;
  const out: FieldError[] = [];
  const words = a.requestedVisibleBodyWords;
  if (words && words.minimum > words.maximum) {
    out.push({ field: 'acceptance.requestedVisibleBodyWords.maximum', message: 'must not be below minimum' });
  }
  const check = (index: number, field: string) => {
    if (index >= count) out.push({ field: `acceptance.${field}`, message: `names coverage requirement ${index}, but only ${count} exist` });
  };
  if (a.asOf && !isCalendarDate(a.asOf.date)) out.push({ field: 'acceptance.asOf.date', message: 'must be a real calendar date (YYYY-MM-DD)' });
  if (a.asOf) check(a.asOf.coverageRequirementIndex, 'asOf.coverageRequirementIndex');
  if (a.confidence) check(a.confidence.coverageRequirementIndex, 'confidence.coverageRequirementIndex');
  a.termGroups?.forEach((g, i) => check(g.coverageRequirementIndex, `termGroups.${i}.coverageRequirementIndex`));
  a.ratioPercentChecks?.forEach((r, i) => check(r.coverageRequirementIndex, `ratioPercentChecks.${i}.coverageRequirementIndex`));
  a.requiredSources?.forEach((s, i) => s.coverageRequirementIndices.forEach((x, j) => check(x, `requiredSources.${i}.coverageRequirementIndices.${j}`)));
  return out;
}

/**
 * Validate a raw request body as a ResearchReportSpec.
 * @throws ServiceError INVALID_REQUEST with fieldErrors; the acceptance size error names the field
 * `acceptance`.
 */
export function parseSpec(body: unknown): ResearchReportSpec {
  const spec = parseOrThrow(ResearchReportSpecSchema, body, 'research report spec');
  if (spec.acceptance !== undefined) {
    const bytes = utf8Length(canonicalJson(spec.acceptance));
    if (bytes > AcceptanceLimits.maxBytes) {
      throw invalid(`The acceptance contract is ${bytes} bytes as canonical UTF-8 JSON; at most ${AcceptanceLimits.maxBytes} are allowed.`, [
        { field: 'acceptance', message: `must be at most ${AcceptanceLimits.maxBytes} bytes as canonical JSON (is ${bytes})` },
      ]);
    }
    const indexErrors = crossFieldErrors(spec.acceptance);
    if (indexErrors.length) throw invalid(`The acceptance contract ${indexErrors[0]!.field.slice('acceptance.'.length)} ${indexErrors[0]!.message}.`, indexErrors);
  }
  return spec;
}
