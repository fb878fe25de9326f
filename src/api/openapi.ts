/**
 * The OpenAPI document the edge serves at /openapi.json: generated from the contract alone (see
 * src/contract/openapi.ts), serialized once.
 * @module
 */
export { buildOpenApi, openApiJson } from '../contract/openapi.ts';
