/** What other modules may use of pages. */
export { addToAudiencesCount, findPage } from './pages.queries.js';
export { MetadataPatch } from './pages.schemas.js';
export { listPages, searchPages } from './pages.service.js';
export type { Metadata } from './pages.schemas.js';
