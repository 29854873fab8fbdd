/** What the composition root uses of the page runtime: the HTML not-found page for browsers. */
export { browserNotFound } from './site.error-pages.js';
