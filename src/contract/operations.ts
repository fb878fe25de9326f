/**
 * Every operation of the contract, declared once, keyed by operationId (`contract.createDocument`)
 * and listed in published order. Plain data: this module and everything it imports hold no server
 * code, so the typed client bundles it without the engine.
 * @module
 */
import type { AnyOperation } from './define.ts';
import * as documents from './documents.ts';
import * as knowledge from './knowledge.ts';
import * as library from './library.ts';
import * as meta from './meta.ts';
import * as operator from './operator.ts';
import * as research from './research.ts';

/** Every operation by operationId, in published order. */
export const contract = {
  getAuth: documents.getAuth,
  listDocuments: documents.listDocuments,
  createDocument: documents.createDocument,
  getDocument: documents.getDocument,
  mutateDocument: documents.mutateDocument,
  listResearchJobs: research.listResearchJobs,
  startResearchJob: research.startResearchJob,
  getResearchJob: research.getResearchJob,
  listResearchJobEvents: research.listResearchJobEvents,
  cancelResearchJob: research.cancelResearchJob,
  getResearchJobReport: research.getResearchJobReport,
  submitProposal: knowledge.submitProposal,
  getPublicArtifact: knowledge.getPublicArtifact,
  getReview: knowledge.getReview,
  search: knowledge.search,
  operatorGetReview: knowledge.operatorGetReview,
  decideReview: knowledge.decideReview,
  setSpacePublication: knowledge.setSpacePublication,
  createRelease: knowledge.createRelease,
  promoteRelease: knowledge.promoteRelease,
  libraryCommand: library.libraryCommand,
  putLibraryUpload: library.putLibraryUpload,
  createCredential: operator.createCredential,
  createSignInLink: operator.createSignInLink,
  getActivation: operator.getActivation,
  setActivation: operator.setActivation,
  getOpenApi: meta.getOpenApi,
  getDocumentPage: meta.getDocumentPage,
  getHomePage: meta.getHomePage,
  getPublicPage: meta.getPublicPage,
  getReviewPage: meta.getReviewPage,
} as const;

/** The contract's type: every entry with its literal types. */
export type Contract = typeof contract;

/** The operationId of any operation. */
export type OperationName = keyof Contract;

/** The operationId of a public operation (in /openapi.json and on the typed client). */
export type PublicOperationId = { [K in OperationName]: Contract[K]['audience'] extends 'public' ? K : never }[OperationName];

/** Every operation, in published order. Operation ids are unique. */
export const contractOperations: readonly AnyOperation[] = Object.freeze(Object.values(contract));
