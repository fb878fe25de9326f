/**
 * What each page shows, read from the engine for the signed-in person's account (a trusted
 * in-process actor of that account: the person sees every document, job, review and token of it).
 * @module
 */
import type { Credential } from '../../src/auth/credentials.ts';
import { displayPrefix } from '../../src/auth/tokens.ts';
import { SCOPES } from '../../src/auth/scopes.ts';
import { isoTimestamp } from '../../src/clock.ts';
import { accountActor } from '../../src/actor.ts';
import type { PublicEngine } from '../../src/engine.ts';
import { isServiceError, notFound } from '../../src/errors.ts';
import { Patterns } from '../../src/ids.ts';
import { isTerminal } from '../../src/jobs/states.ts';
import type { ResearchJob } from '../../src/jobs/schemas.ts';
import type { ProposalRecord } from '../../src/knowledge/records.ts';
import { locatorPath } from '../../src/contract/links.ts';
import { render } from './html.ts';
import type { RequestInspector } from './inspector.ts';
import { citationsOf, richJsonHtml } from '../../src/api/rich-html.ts';
import './templates.ts';


/** The values the token form shows (empty or as the person sent them). */
export interface TokenForm {
  label: string;
  document: string;
  requestBudget: string;
  expiresInDays: string;
  scopes: readonly string[];
}

/** The form as it first appears. */
export const EMPTY_TOKEN_FORM: TokenForm = { label: '', document: '', requestBudget: '10000', expiresInDays: '90', scopes: ['document:read'] };

/** The account's jobs, newest first (every credential's and the in-process ones). */
export function accountJobs(engine: PublicEngine, accountId: string, credentials: readonly Credential[], limit = 20): Promise<ResearchJob[]> {
  return engine.jobs.listOfAccount(accountId, credentials.map((c) => c.credentialRef), limit);
}

/**
 * A timestamp as the server shows it before the page's script turns it into the reader's local time
 * (`<time datetime>` keeps the ISO value): `2026-11-29 01:05 UTC`.
 */
export function readable(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** A job's phase in the person's words. */
const PHASE_LABELS: Readonly<Record<string, string>> = {
  queued: 'Queued',
  planning: 'Planning',
  retrieving: 'Reading sources',
  extracting: 'Extracting claims',
  proposing: 'Proposing findings',
  synthesizing: 'Writing the report',
  'requesting-review': 'Waiting for your review',
  complete: 'Complete',
};
export const phaseLabel = (phase: string): string => PHASE_LABELS[phase] ?? phase.replace(/-/g, ' ');

/** What a review is about, for its title: the question of the job that proposed it, else of its first inquiry, else its entities. */
export function reviewTitle(p: ProposalRecord, question: string | null | undefined): string {
  const q = question ?? p.request.inquiries[0]?.question;
  if (q) return q.length > 200 ? `${q.slice(0, 199)}…` : q;
  const names = p.request.entities.slice(0, 3).map((e) => e.name);
  return names.length ? `Proposal about ${names.join(', ')}` : 'Proposal';
}

/** The body of the console (`/`). */
export async function homeBody(engine: PublicEngine, accountId: string, inspector: RequestInspector): Promise<{ body: string; liveJobs: string[] }> {
  const actor = accountActor(accountId);
  const credentials = await engine.credentials.listOfAccount(accountId);
  const [docs, jobs, proposals, library] = await Promise.all([
    engine.documents.list(actor, { limit: 20 }),
    accountJobs(engine, accountId, credentials),
    engine.operator.proposalsOfAccount(accountId),
    engine.library.execute(actor, { type: 'list', limit: 20 }).catch(() => null),
  ]);
  const questionOfReview = new Map(jobs.filter((j) => j.artifacts.review).map((j) => [j.artifacts.review!.reviewRef, j.spec.question]));
  const reviews = proposals
    .filter((p) => p.accountId === accountId && (p.state === 'proposed' || p.state === 'in-review'))
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((p) => ({ reviewRef: p.reviewRef, title: reviewTitle(p, questionOfReview.get(p.reviewRef)), state: p.state, summary: `${p.request.entities.length} entities, ${p.request.facts.length} facts` }));
  const liveJobs = jobs.filter((j) => !isTerminal(j.state)).map((j) => j.jobId);
  const items = library && library.type === 'list' ? library.items : [];
  const body = render('@home', {
    reviews,
    documents: docs.items.map((d) => ({ documentRef: d.documentRef, title: d.title, version: d.version, updatedAt: d.updatedAt })),
    readable,
    jobs: jobs.map((j) => ({ jobId: j.jobId, question: j.spec.question.slice(0, 200), state: j.state, phase: j.phase, phaseLabel: phaseLabel(j.phase), percent: j.progress.percent, summary: j.progress.summary, reviewRef: j.artifacts.review?.reviewRef ?? null })),
    live: liveJobs.length > 0,
    library: items.map((i) => ({ title: i.title ?? i.url ?? i.fileName ?? i.itemId, kind: i.kind, capture: i.capture?.state ?? null })),
    requests: inspector.list(new Set(credentials.map((c) => c.credentialRef)), {}, 10),
  });
  return { body, liveJobs };
}

/** The body of `/settings/api`. */
export async function settingsBody(engine: PublicEngine, accountId: string, csrf: string, extra: { newToken?: string; errors?: string[]; form?: TokenForm } = {}): Promise<string> {
  const now = engine.clock.now();
  const credentials = await engine.credentials.listOfAccount(accountId);
  const form = extra.form ?? EMPTY_TOKEN_FORM;
  return render('@settings', {
    readable,
    csrf,
    newToken: extra.newToken ?? null,
    errors: extra.errors ?? [],
    form,
    scopes: SCOPES.map((name) => ({ name, checked: form.scopes.includes(name) })),
    tokens: credentials.map((c) => {
      const budget = engine.credentials.budget(c);
      return {
        credentialRef: c.credentialRef,
        displayPrefix: displayPrefix(c.credentialRef),
        label: c.label,
        documentRef: c.documentRef,
        remaining: budget.remaining,
        budget: c.requestBudget,
        expiresAt: isoTimestamp(c.expiresAt),
        revoked: Boolean(c.revokedAt),
        expired: now >= c.expiresAt,
      };
    }),
  });
}

/** One version of a document as the page and its event stream show it. */
export interface DocumentVersionView {
  title: string;
  version: number;
  revision: string;
  html: string;
  markdown: string;
  lossCount: number;
  /**
   * Why there is no Markdown of this version (it holds blocks the Markdown grammar cannot carry, say
   * a divider put in through the live editor), or null. The page still renders, from rich-json.
   */
  markdownRefused: string | null;
}

/** A document of the account, rendered from its rich-json; NOT_FOUND outside the account. */
export async function documentView(engine: PublicEngine, accountId: string, documentRef: string): Promise<DocumentVersionView> {
  if (!Patterns.documentRef.test(documentRef)) throw notFound('Document');
  const actor = accountActor(accountId);
  const rich = await engine.documents.read(actor, documentRef, 'rich-json');
  if (rich.format !== 'rich-json') throw notFound('Document');
  let markdown = '';
  let lossCount = 0;
  let markdownRefused: string | null = null;
  try {
    const md = await engine.documents.read(actor, documentRef, 'markdown');
    if (md.format === 'markdown') ({ markdown, lossCount } = md);
  } catch (error) {
    // Blocks outside the Markdown grammar (409 for an agent asking for Markdown): the page shows the
    // document from rich-json, with a note, so that the person can open the editor and fix it.
    if (!isServiceError(error) || error.code !== 'CONFLICT') throw error;
    markdownRefused = error.message;
  }
  return { title: rich.document.title, version: rich.version, revision: rich.revision, html: richJsonHtml(rich.document.documentJson), markdown, lossCount, markdownRefused };
}

/** The live editor's mount point on the document page: who edits, and the page's style nonce. */
export interface DocumentEditor {
  person: string;
  nonce: string;
}

/** The body of `/documents/{ref}`: the rendered document, and the editor's mount point when there is one. */
export function documentBody(documentRef: string, view: DocumentVersionView, editor: DocumentEditor | null): string {
  return render('@document', { documentRef, ...view, editor });
}

/** The proposal of a review, if it belongs to the account; NOT_FOUND otherwise. */
export async function proposalOf(engine: PublicEngine, accountId: string, reviewRef: string): Promise<ProposalRecord> {
  if (!Patterns.reviewRef.test(reviewRef)) throw notFound('The review');
  const p = await engine.operator.proposalOfReview(reviewRef);
  if (p.accountId !== accountId) throw notFound('The review');
  return p;
}

/** The job that submitted a proposal, read as the trusted side. */
export function jobOf(engine: PublicEngine, p: ProposalRecord): Promise<ResearchJob | null> {
  return engine.jobs.readOfAccount(p.accountId, p.jobId);
}

/** The body of `/reviews/{ref}`. */
export async function reviewBody(engine: PublicEngine, accountId: string, p: ProposalRecord, csrf: string): Promise<string> {
  const job = await jobOf(engine, p);
  const req = p.request;
  const entityName = new Map(req.entities.map((e) => [e.key, e.name]));
  let report: { title: string; html: string; citations: { href: string; text: string }[] } | null = null;
  const reportRef = job?.artifacts.report?.documentRef;
  if (reportRef) {
    const read = await engine.documents.read(accountActor(accountId), reportRef, 'rich-json').catch(() => null);
    if (read && read.format === 'rich-json') {
      report = { title: read.document.title, html: richJsonHtml(read.document.documentJson), citations: citationsOf(read.document.documentJson) };
    }
  }
  const publication = p.state === 'accepted' ? await engine.publication.state(p) : null;
  const objectText = (o: Record<string, unknown>): string => {
    if (o.kind === 'entity') return String(entityName.get(String(o.entityKey)) ?? o.entityKey);
    if (o.kind === 'text') return String(o.text);
    if (o.kind === 'uri') return String(o.uri);
    if (o.kind === 'duration') return String(o.iso8601);
    return String(o.value);
  };
  return render('@review', {
    csrf,
    reviewRef: p.reviewRef,
    proposalRef: p.proposalRef,
    state: p.state,
    jobId: job?.jobId ?? null,
    jobState: job ? `${job.state}, ${job.phase}` : '',
    conflicts: p.conflicts,
    entities: req.entities.map((e) => ({ name: e.name, description: e.description, concepts: e.concepts.join(', ') })),
    facts: req.facts.map((f) => ({ subject: entityName.get(f.subject) ?? f.subject, predicate: f.predicate, stance: f.stance, object: objectText(f.object as Record<string, unknown>) })),
    evidence: req.evidence.map((e) => {
      const src = e.source as Record<string, unknown>;
      const uri = src.kind === 'uri' ? String(src.uri) : null;
      return { bearing: e.bearing, fact: e.factKey, href: uri && /^https?:/i.test(uri) ? uri : null, source: uri ?? String(entityName.get(String(src.entityKey)) ?? src.entityKey ?? src.kind) };
    }),
    inquiries: req.inquiries.map((q) => q.question),
    canDecide: p.state === 'proposed' || p.state === 'in-review',
    report,
    rightsConfirmed: publication?.rightsConfirmed ?? false,
    released: (publication?.releases.length ?? 0) > 0,
    releaseCount: publication?.releases.length ?? 0,
    promoted: publication?.promoted ?? false,
    publicLinks: (publication?.releases ?? []).filter((r) => r.state === 'promoted').map((r) => ({ kind: r.kind, title: r.title, href: locatorPath(r) })),
  });
}

/** The body of `/requests`. */
export async function requestsBody(engine: PublicEngine, accountId: string, inspector: RequestInspector, filter: { token?: string | undefined; status?: string | undefined }): Promise<string> {
  const credentials = await engine.credentials.listOfAccount(accountId);
  const byRef = new Map(credentials.map((c) => [c.credentialRef, c]));
  const token = filter.token && byRef.has(filter.token) ? filter.token : undefined;
  const status = filter.status && /^(?:[1-5]xx|[1-5]\d\d)$/.test(filter.status) ? filter.status : undefined;
  const statuses = [
    { value: '', label: 'Any status' },
    { value: '2xx', label: '2xx success' },
    { value: '4xx', label: '4xx client error' },
    { value: '5xx', label: '5xx server error' },
  ];
  if (status && !statuses.some((s) => s.value === status)) statuses.push({ value: status, label: status });
  return render('@requests', {
    readable,
    tokens: credentials.map((c) => ({ credentialRef: c.credentialRef, label: c.label, displayPrefix: displayPrefix(c.credentialRef), selected: c.credentialRef === token })),
    statuses: statuses.map((s) => ({ ...s, selected: s.value === (status ?? '') })),
    requests: inspector.list(new Set(byRef.keys()), { credentialRef: token, status }).map((r) => ({
      time: isoTimestamp(r.at),
      token: byRef.get(r.credentialRef)?.label ?? r.credentialRef,
      method: r.method,
      path: r.path,
      status: r.status,
      errorCode: r.errorCode,
      durationMs: r.durationMs,
      requestId: r.requestId,
    })),
  });
}
