/** What other modules may use of audiences. */
export { archiveAudience, createAudience, type NewAudience } from './audiences.service.js';
