/**
 * The operation registry: every operation the handler serves, each declared once. OpenAPI paths, the
 * route table, and later the typed client and MCP tools are derived from this list.
 * @module
 */
import { authOperations } from '../operations/auth.ts';
import { documentOperations } from '../operations/documents.ts';
import { knowledgeOperations } from '../operations/knowledge.ts';
import { libraryOperations } from '../operations/library.ts';
import { metaOperations } from '../operations/meta.ts';
import { operatorOperations } from '../operations/operator.ts';
import { publicPageOperations } from '../operations/public-pages.ts';
import { researchOperations } from '../operations/research.ts';
import { openApiOf } from '../openapi.ts';
import type { AnyOperation } from './operation.ts';

export { defineOperation, wireFieldNames } from './operation.ts';
export type { AnyOperation, OperationDef, OperationInput, InputDef, ParamDef, HeaderDef, BodyDef, ResponseDef, Audience } from './operation.ts';

/** Every operation, in published order. Operation ids are unique. */
export function listOperations(): readonly AnyOperation[] {
  return OPERATIONS;
}

const OPERATIONS: readonly AnyOperation[] = Object.freeze([
  ...authOperations,
  ...documentOperations,
  ...researchOperations,
  ...knowledgeOperations,
  ...libraryOperations,
  ...operatorOperations,
  ...metaOperations,
  ...publicPageOperations,
]);

/** The published OpenAPI 3.1 document (served at /openapi.json), generated from the registry. */
export function buildOpenApi(): object {
  return openApiOf(OPERATIONS).doc;
}

/** {@link buildOpenApi} as JSON text, serialized once. */
export function openApiJson(): string {
  return openApiOf(OPERATIONS).json;
}
