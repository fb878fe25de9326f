/**
 * Readable text of a PDF with unpdf (a maintained, dependency-free build of Mozilla's PDF.js for
 * server runtimes): one paragraph per blank-line-separated run of lines, page by page.
 * @module
 */
import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import type { ExtractedText } from '../../src/library/capture-port.ts';

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Extract the title (document info) and paragraphs of a PDF. */
export async function extractPdf(bytes: Uint8Array): Promise<ExtractedText> {
  // PDF.js takes ownership of (detaches) the buffer it is given, so it gets a copy.
  // verbosity 0: errors only (PDF.js otherwise logs repair warnings to the console).
  const pdf = await getDocumentProxy(bytes.slice(), { verbosity: 0 });
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => null);
    const info = (meta?.info ?? {}) as { Title?: unknown; Author?: unknown };
    const paragraphs: string[] = [];
    for (const page of text) {
      for (const part of page.split(/\n\s*\n/)) {
        const p = squash(part);
        if (p) paragraphs.push(p);
      }
    }
    return {
      title: typeof info.Title === 'string' && info.Title.trim() ? squash(info.Title) : null,
      byline: typeof info.Author === 'string' && info.Author.trim() ? squash(info.Author) : null,
      paragraphs,
      loginWall: false,
    };
  } finally {
    await pdf.loadingTask.destroy();
  }
}
