/**
 * Every binding the handler serves: one implementation per contract entry (a test holds them one to
 * one). The route table is compiled from these; /openapi.json, the MCP tools and the typed client
 * read the contract, never this list.
 * @module
 */
import type { AnyBinding } from './bind.ts';
import { authBindings } from './operations/auth.ts';
import { documentBindings } from './operations/documents.ts';
import { knowledgeBindings } from './operations/knowledge.ts';
import { libraryBindings } from './operations/library.ts';
import { metaBindings } from './operations/meta.ts';
import { operatorBindings } from './operations/operator.ts';
import { publicPageBindings } from './operations/public-pages.ts';
import { researchBindings } from './operations/research.ts';

const BINDINGS: readonly AnyBinding[] = Object.freeze([
  ...authBindings,
  ...documentBindings,
  ...researchBindings,
  ...knowledgeBindings,
  ...libraryBindings,
  ...operatorBindings,
  ...metaBindings,
  ...publicPageBindings,
]);

/** Every binding, in the contract's order. */
export function listBindings(): readonly AnyBinding[] {
  return BINDINGS;
}
