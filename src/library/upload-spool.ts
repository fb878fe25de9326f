/**
 * The upload spool: where the bytes of a file upload wait, from its PUT until its capture has run.
 * @remarks A port of its own so that upload bytes never sit in the record store (records are loaded
 * whole, and the lowdb and memory stores keep every record in memory): the PUT appends its body chunk
 * by chunk as it arrives, finish-upload reads the first bytes to sniff the content, the capture reads
 * the whole file once, and the library removes the bytes when the capture has run or the upload
 * expired. Implementations: {@link memoryUploadSpool} (memory storage), `fileUploadSpool({ dir })`
 * in adapters/lowdb (one file per upload, the dev server's data folder). A database adapter needs the
 * same five methods (a table of chunks, or large objects).
 *
 * Contract every implementation keeps:
 * - ids are the library's upload ids (`lupl_` + 24 hex), safe as file names;
 * - `create` starts the bytes of an id empty (dropping any earlier bytes), `append` adds at the end,
 *   and the spool does not keep a reference to a chunk after `append` settles;
 * - `read` of an id without bytes answers null; `remove` of an unknown id is no error;
 * - `list` names every id holding bytes (the library removes orphans at start);
 * - appends to one id are never concurrent (the library allows one PUT per upload at a time).
 *
 * Memory is bounded by the library's caps, not by the spool: at most `maxOpenUploads` unfinished
 * uploads of `maxOpenUploadBytes` per credential, each at most `maxUploadBytes`.
 * @module
 */

/** See the module remarks. */
export interface UploadSpool {
  /** Start the bytes of `id` empty, dropping any earlier bytes. */
  create(id: string): Promise<void>;
  /** Add `chunk` at the end of the bytes of `id` (created first). */
  append(id: string, chunk: Uint8Array): Promise<void>;
  /** The bytes of `id` — only the first `maxBytes` when given — or null when it holds none. */
  read(id: string, maxBytes?: number): Promise<Uint8Array | null>;
  /** Drop the bytes of `id`; no error when there are none. */
  remove(id: string): Promise<void>;
  /** Every id that holds bytes. */
  list(): Promise<string[]>;
}

/** A spool on the heap: chunks kept as they arrive (copied), joined on read. */
export function memoryUploadSpool(): UploadSpool {
  const files = new Map<string, { chunks: Uint8Array[]; size: number }>();
  const join = (file: { chunks: Uint8Array[]; size: number }, max: number): Uint8Array => {
    const out = new Uint8Array(Math.min(file.size, max));
    let at = 0;
    for (const c of file.chunks) {
      if (at >= out.length) break;
      const part = c.subarray(0, out.length - at);
      out.set(part, at);
      at += part.length;
    }
    return out;
  };
  return {
    async create(id) {
      files.set(id, { chunks: [], size: 0 });
    },
    async append(id, chunk) {
      let file = files.get(id);
      if (!file) files.set(id, (file = { chunks: [], size: 0 }));
      file.chunks.push(chunk.slice());
      file.size += chunk.byteLength;
    },
    async read(id, maxBytes = Infinity) {
      const file = files.get(id);
      return file ? join(file, maxBytes) : null;
    },
    async remove(id) {
      files.delete(id);
    },
    async list() {
      return [...files.keys()];
    },
  };
}
