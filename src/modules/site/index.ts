/** What the composition root uses of the page runtime: the HTML not-found page for browsers. */
export { browserNotFound } from './site.error-pages.js';
/** What the audiences module uses: the signed preview URL of a version. */
export { previewUrl } from './site.preview.js';
