/**
 * What other modules may use of audiences. The API's audience creation, `createAudience` (one
 * code path for the create route, the batch endpoint and the CSV import), is in
 * audiences.service.ts: import it from there inside this module.
 */
export { regeneratePage } from './audiences.regenerate.js';
export { archiveAudience, listAudiences, seedAudience, type NewAudience } from './audiences.service.js';
export { publishPageDrafts } from './audiences.versions.js';
