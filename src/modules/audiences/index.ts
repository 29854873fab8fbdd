/**
 * What other modules may use of audiences. The API's audience creation, `createAudience` (one
 * code path for the create route, the batch endpoint and the CSV import), is in
 * audiences.service.ts: import it from there inside this module.
 */
export { regeneratePage } from './audiences.regenerate.js';
export {
  archiveAudience,
  archiveAudienceOnPage,
  createAudience,
  getAudience,
  listAudiences,
  patchAudience,
  restoreAudience,
  seedAudience,
  type NewAudience,
} from './audiences.service.js';
export {
  createVersion,
  listVersions,
  previewableVersion,
  publishOrRollBack,
  publishPageDrafts,
  versionWithGeneration,
} from './audiences.versions.js';
export { checkItem, createAudienceBatch } from './audiences.batch.js';
export { audienceImportJobs, getImport, startImport, type ImportStatus } from './audiences.import-job.js';
export { AudienceCreateBody, AudiencePatchBody, type Audience } from './audiences.schemas.js';
