/**
 * What a file is, decided by its bytes: `file-type` (a maintained magic-number detector) for binary
 * formats (PDF, EPUB, ZIP, images …); HTML, which has no magic number, by its markup at the start.
 * @module
 */
import { fileTypeFromBuffer } from 'file-type';
import type { DetectedContent } from '../../src/library/capture-port.ts';
import { bomEncoding } from './html-text.ts';

const HTML_START = /^(?:\s|<!--[\s\S]*?-->)*<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

/** Detect the content kind of `bytes`. */
export async function detectContent(bytes: Uint8Array): Promise<DetectedContent> {
  // Text with a byte order mark is text: FF FE also starts an MPEG audio frame, which file-type would see.
  const bom = bomEncoding(bytes);
  const type = bom ? undefined : await fileTypeFromBuffer(bytes);
  if (type) return type.mime === 'application/pdf' ? { kind: 'pdf', mime: type.mime } : { kind: 'other', mime: type.mime, ext: type.ext };
  const head = new TextDecoder(bom ?? 'utf-8').decode(bytes.subarray(0, 4096)).replace(/^\uFEFF/, '');
  if (!head.includes('\u0000') && HTML_START.test(head)) return { kind: 'html', mime: 'text/html' };
  return { kind: 'other', mime: head.includes('\u0000') ? 'application/octet-stream' : 'text/plain', ext: null };
}
