/** What other modules may use of audiences. */
export { regeneratePage } from './audiences.regenerate.js';
export { archiveAudience, createAudience, listAudiences, type NewAudience } from './audiences.service.js';
export { publishPageDrafts } from './audiences.versions.js';
