/** What other modules may use of page links (the page runtime resolves paths the same way). */
export { normalizePath, RESERVED_SEGMENT } from './page-links.service.js';
