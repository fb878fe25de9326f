/** The memory and file upload spools run the upload spool conformance list. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryUploadSpool } from '../../src/library/upload-spool.ts';
import { uploadSpoolConformance } from '../conformance/upload-spool.ts';
import { fileUploadSpool } from './upload-spool.ts';

uploadSpoolConformance('memory', async () => ({ spool: memoryUploadSpool(), teardown: async () => {} }));

uploadSpoolConformance('file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-spool-conf-'));
  return { spool: fileUploadSpool({ dir: join(dir, 'uploads') }), teardown: () => rm(dir, { recursive: true, force: true }) };
});
