/**
 * The typed client as a browser app would ship it: `src/client/index.ts` bundled by esbuild (minified,
 * platform browser, ky and valibot included), its size before and after gzip, and the modules of the
 * metafile that a client must never carry (markdown-it, minisearch, eta, yjs, node: built-ins).
 * Used by the bundle budget test and by `npm run bench -- bundle`.
 */
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The budget: at most this many bytes after gzip. */
export const CLIENT_BUNDLE_GZIP_BUDGET = 35 * 1024;

/** Packages (and the node: scheme) the client bundle must not contain. */
export const FORBIDDEN_IN_CLIENT = ['markdown-it', 'minisearch', 'eta', 'yjs', 'node:'] as const;

/** What {@link measureClientBundle} finds. */
export interface ClientBundle {
  minifiedBytes: number;
  gzipBytes: number;
  /** Every input of the bundle (metafile paths). */
  inputs: string[];
  /** Inputs that name a forbidden package or a node: module. */
  forbidden: string[];
}

/** Bundle the client of the repository at `root` and measure it. */
export async function measureClientBundle(root: string): Promise<ClientBundle> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, 'src/client/index.ts')],
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.contents;
  const inputs = Object.keys(result.metafile.inputs);
  const forbidden = inputs.filter((path) =>
    FORBIDDEN_IN_CLIENT.some((name) => (name === 'node:' ? path.startsWith('node:') || path.includes('(disabled):') : path.includes(`node_modules/${name}/`))),
  );
  return { minifiedBytes: code.byteLength, gzipBytes: gzipSync(code).byteLength, inputs, forbidden };
}
