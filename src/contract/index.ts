/**
 * `knowledge-workspace/contract`: every operation of the API declared once as plain data, and the
 * OpenAPI document generated from it. No server code: importing it brings valibot and the schemas,
 * never the engine.
 * @example
 * import { contract, buildOpenApi } from 'knowledge-workspace/contract';
 * contract.createDocument.path; // '/api/v1/documents'
 * @module
 */
export {
  operation,
  wireFieldNames,
  sharedErrorStatuses,
  declaredStatuses,
  successSchemas,
  type ActivationSwitch,
  type AnyOperation,
  type Audience,
  type BodyDef,
  type BytesDef,
  type CallInputOf,
  type ContractOperation,
  type HeaderDef,
  type HeaderValues,
  type HttpMethod,
  type InputDef,
  type OperationInput,
  type ParamDef,
  type PathValues,
  type QueryArg,
  type QueryValues,
  type ResponseDef,
  type ResponseHeader,
  type ResponsesDef,
  type ScopeName,
  type SuccessBodyOf,
} from './define.ts';
export { contract, contractOperations, type Contract, type OperationName, type PublicOperationId } from './operations.ts';
export * from './params.ts';
export * from './response-schemas.ts';
export { buildOpenApi, openApiJson, openApiOf } from './openapi.ts';
