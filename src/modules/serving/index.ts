/**
 * What other modules use of the page cache's invalidation: `servingChanged(scope)`, called in the
 * transaction of every change that alters what a tenant's host and path serve, and the per-process
 * view of those changes the page runtime keeps its cache by.
 */
export { servingChanged, ServingRevisions } from './serving.service.js';
