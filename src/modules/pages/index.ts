/** What other modules may use of pages. */
export { addToAudiencesCount, findPage } from './pages.queries.js';
export { MetadataPatch } from './pages.schemas.js';
export { PAGE_TYPES, PageCreateBody, PagePatchBody } from './pages.schemas.js';
export {
  archivePage,
  createPageFromApi,
  getPage,
  listPages,
  patchPage,
  publishPage,
  restorePage,
  searchPages,
} from './pages.service.js';
export type { Page } from './pages.schemas.js';
export type { Metadata } from './pages.schemas.js';
