/**
 * Reports: staging one as a real engine document (through the documents service, so it has real,
 * stable blocks and all three representations), and exporting it through the job.
 * @module
 */
import type { BlockInput } from '../blocks/model.ts';
import type { EngineDeps } from '../deps.ts';
import { accountActor } from '../actor.ts';
import { ServiceError, conflict, invalid, isServiceError } from '../errors.ts';
import type { DocumentRead, DocumentsService } from '../documents/types.ts';
import type { ReportArtifact, ReportInput } from './runner.ts';
import type { ResearchReportSpec } from './schemas.ts';
import { utf8Length } from '../text.ts';

/** Limits of a research report. */
import { ReportLimits } from '../limits.ts';
export { ReportLimits };

/** Report export formats. */
export { REPORT_FORMATS } from './schemas.ts';
import { REPORT_FORMATS } from './schemas.ts';
export type ReportFormat = (typeof REPORT_FORMATS)[number];


/**
 * A job as the domain reads it: its staged report by its document alone. Job records written before
 * the links moved to the edge also stored the report's export links; those are left out here (the
 * API renders them from the job id when it answers).
 */
export function logicalJob<J extends { artifacts: { report: ReportArtifact | null } }>(job: J): J {
  const report = job.artifacts.report;
  if (report === null || Object.keys(report).length === 1) return job;
  return { ...job, artifacts: { ...job.artifacts, report: { documentRef: report.documentRef } } };
}

function firstChars(text: string, max: number): string {
  const chars = Array.from(text.trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}\u2026`;
}

/** The default title of a report: the new document's title, else the question. */
export function reportTitle(spec: ResearchReportSpec, title: string | undefined): string {
  const raw = title ?? (spec.spaceRef.kind === 'new-document' ? spec.spaceRef.title : `Report: ${spec.question}`);
  const out = firstChars(raw, ReportLimits.titleMax);
  return out.length > 0 ? out : 'Research report';
}

function textBytes(blocks: readonly BlockInput[]): number {
  let n = 0;
  for (const b of blocks) {
    n += utf8Length(b.markdown ?? '') + utf8Length(b.code ?? '');
    for (const row of b.rows ?? []) for (const cell of row) n += utf8Length(cell);
    if (b.children) n += textBytes(b.children);
  }
  return n;
}

/**
 * Create the report document of a job and write its blocks (in mutations of at most 50 top-level
 * blocks each). Returns the new document's ref.
 * @throws INVALID_REQUEST for an empty or invalid report (the documents service names the block),
 * CONFLICT when the report would exceed 760,000 bytes.
 * @remarks Fresh idempotency keys per call: a crash in the middle leaves an unreferenced partial
 * document, never a job pointing at half a report (the job records the report only afterwards).
 */
export async function writeReportDocument(
  deps: EngineDeps,
  documents: DocumentsService,
  accountId: string,
  spec: ResearchReportSpec,
  report: ReportInput,
): Promise<string> {
  if (!Array.isArray(report.blocks) || report.blocks.length === 0) {
    throw invalid('A report needs at least one block.', [{ field: 'blocks', message: 'must have at least 1 block' }]);
  }
  if (textBytes(report.blocks) > ReportLimits.maxBytes) {
    throw conflict(`The report text exceeds ${ReportLimits.maxBytes} bytes; a research report is at most that large.`, 'blocks');
  }
  const actor = accountActor(accountId);
  const created = await documents.create(actor, {
    idempotencyKey: `jobreport-${deps.ids.hex(40)}`,
    body: { v: 1, title: reportTitle(spec, report.title) },
  });
  let revision = created.document.revision;
  const ref = created.document.documentRef;
  for (let i = 0; i < report.blocks.length; i += ReportLimits.blocksPerMutation) {
    const blocks = report.blocks.slice(i, i + ReportLimits.blocksPerMutation);
    const out = await documents.mutate(actor, ref, {
      idempotencyKey: `jobreport-${deps.ids.hex(40)}`,
      ifRevision: revision,
      body: { v: 1, intent: 'Stage the research report', mutation: { kind: 'create', beforeBlockId: null, parentBlockId: null, blocks } },
    });
    revision = out.document.revision;
    if (utf8Length(out.document.documentJson) > ReportLimits.maxBytes) {
      throw conflict(`The report document exceeds ${ReportLimits.maxBytes} bytes; a research report is at most that large.`, 'blocks');
    }
  }
  return ref;
}

/**
 * Read a staged report document in `format` for export.
 * @remarks Markdown loss issues are capped at 256 (`lossCount` stays exact). A report that is gone or
 * grew past 760,000 bytes is CONFLICT (the binding is inconsistent).
 */
export async function exportReport(documents: DocumentsService, accountId: string, documentRef: string, format: ReportFormat): Promise<DocumentRead> {
  let read: DocumentRead;
  try {
    read = await documents.read(accountActor(accountId), documentRef, format);
  } catch (e) {
    if (isServiceError(e) && e.code === 'NOT_FOUND') {
      throw new ServiceError('CONFLICT', 'The job names a report document that no longer exists; the report binding is inconsistent.', { cause: e });
    }
    throw e;
  }
  const bytes = read.format === 'rich-json' ? utf8Length(read.document.documentJson) : read.format === 'markdown' ? utf8Length(read.markdown) : 0;
  if (bytes > ReportLimits.maxBytes) {
    throw new ServiceError('CONFLICT', `The report document is ${bytes} bytes, over the ${ReportLimits.maxBytes}-byte report limit, so it cannot be exported.`);
  }
  if (read.format === 'markdown' && read.losses.length > ReportLimits.maxLossIssues) {
    return { ...read, losses: read.losses.slice(0, ReportLimits.maxLossIssues) };
  }
  return read;
}
