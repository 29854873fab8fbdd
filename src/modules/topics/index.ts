/** What other modules may use of topics: the tenant's knowledge, in order (generation reads it). */
export { listKnowledge } from './topics.queries.js';
