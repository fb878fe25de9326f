/**
 * The file upload spool of the dev server: one file per upload, `<dir>/<uploadId>.part`, beside the
 * lowdb data (see the {@link UploadSpool} port in src/library/upload-spool.ts).
 * @remarks Bytes are appended as they arrive and read back once (the first bytes for content
 * sniffing, the whole file for the capture), so a 20 MiB upload never sits in memory while it is
 * sent. The folder is created on first use. Ids are checked against the upload-id grammar before
 * they touch a path. Durability is not needed: a spool file lost in a crash only fails that upload's
 * finish or capture, and the library removes files no upload claims at start.
 * @module
 */
import { appendFile, mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { UploadSpool } from '../../src/library/upload-spool.ts';

/** Options of {@link fileUploadSpool}. */
export interface FileUploadSpoolOptions {
  /** The folder of the spool files (the dev server: `<data>/uploads`). */
  dir: string;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const SUFFIX = '.part';

/** A spool of files in `dir`. */
export function fileUploadSpool(options: FileUploadSpoolOptions): UploadSpool {
  const { dir } = options;
  let made: Promise<unknown> | null = null;
  const path = (id: string) => {
    if (!ID.test(id)) throw new TypeError(`not an upload spool id: ${JSON.stringify(id).slice(0, 80)}`);
    return join(dir, `${id}${SUFFIX}`);
  };
  const ready = () => (made ??= mkdir(dir, { recursive: true }));
  return {
    async create(id) {
      await ready();
      await writeFile(path(id), new Uint8Array(0));
    },
    async append(id, chunk) {
      await ready();
      await appendFile(path(id), chunk);
    },
    async read(id, maxBytes = Infinity) {
      let handle;
      try {
        handle = await open(path(id), 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
      try {
        const size = (await handle.stat()).size;
        const out = new Uint8Array(Math.min(size, maxBytes));
        let at = 0;
        while (at < out.length) {
          const { bytesRead } = await handle.read(out, at, out.length - at, at);
          if (bytesRead === 0) break;
          at += bytesRead;
        }
        return at === out.length ? out : out.subarray(0, at);
      } finally {
        await handle.close();
      }
    },
    async remove(id) {
      await rm(path(id), { force: true });
    },
    async list() {
      try {
        return (await readdir(dir)).filter((f) => f.endsWith(SUFFIX)).map((f) => f.slice(0, -SUFFIX.length)).filter((id) => ID.test(id));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw e;
      }
    },
  };
}
