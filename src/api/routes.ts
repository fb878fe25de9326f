/**
 * The route table: every operation of the contract's operation table, the library endpoint, the
 * operator API, /openapi.json and the local document page.
 * @module
 */
import { readPrincipal } from './auth-routes.ts';
import type { Operation, RouteDef } from './context.ts';
import { createDocument, listDocuments, mutateDocument, readDocument } from './documents-routes.ts';
import { createCredential, readActivation, setActivation } from './operator-routes.ts';
import { submitProposal } from './proposal-routes.ts';
import { cancelJob, listJobs, readJob, readJobEvents, readJobReport, startJob } from './research-routes.ts';
import { libraryCommand, readPublicArtifact, readReview, search } from './surface-routes.ts';

/** Operations the handler builds itself (they need its options). */
export interface EdgeOperations {
  openapi: Operation;
  documentPage: Operation | null;
}

/** Every route, by path. */
export function routeTable(edge: EdgeOperations): RouteDef[] {
  const routes: RouteDef[] = [
    { path: '/api/v1/auth', methods: { GET: readPrincipal } },
    { path: '/api/v1/documents', methods: { GET: listDocuments, POST: createDocument } },
    { path: '/api/v1/documents/:documentRef', methods: { GET: readDocument } },
    { path: '/api/v1/documents/:documentRef/mutations', methods: { POST: mutateDocument } },
    { path: '/api/v1/research-jobs', methods: { GET: listJobs, POST: startJob } },
    { path: '/api/v1/research-jobs/:jobId', methods: { GET: readJob } },
    { path: '/api/v1/research-jobs/:jobId/events', methods: { GET: readJobEvents } },
    { path: '/api/v1/research-jobs/:jobId/cancellations', methods: { POST: cancelJob } },
    { path: '/api/v1/research-jobs/:jobId/report', methods: { GET: readJobReport } },
    { path: '/api/v1/proposals', methods: { POST: submitProposal } },
    { path: '/api/v1/public/artifacts/:kind/:artifactId/:revision', methods: { GET: readPublicArtifact } },
    { path: '/api/v1/reviews/:reviewRef', methods: { GET: readReview } },
    { path: '/api/v1/search', methods: { POST: search } },
    { path: '/api/v1/library', methods: { POST: libraryCommand } },
    { path: '/operator/v1/credentials', methods: { POST: createCredential } },
    { path: '/operator/v1/activation', methods: { GET: readActivation, POST: setActivation } },
    { path: '/openapi.json', methods: { GET: edge.openapi } },
  ];
  if (edge.documentPage) routes.push({ path: '/documents/:documentRef', methods: { GET: edge.documentPage } });
  return routes;
}
