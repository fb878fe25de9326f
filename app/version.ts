/**
 * The package version `kw --version` prints; read from package.json (bundled into dist/kw.mjs).
 * @module
 */
import pkg from '../package.json' with { type: 'json' };

/** The version of the knowledge-workspace package this `kw` belongs to. */
export const VERSION: string = pkg.version;
