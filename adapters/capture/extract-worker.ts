/**
 * Entry module of an extraction thread (see extract-pool.ts): serves requests on the parent port.
 * @module
 */
import { serveExtractions } from './extract-thread.ts';

serveExtractions();
