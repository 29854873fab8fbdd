/** What other modules may use of page links (the page runtime resolves paths the same way). */
export { normalizePath } from './page-links.service.js';
