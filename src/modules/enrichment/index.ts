/** What other modules may use of enrichment: queue a form submission's job, and its wake-up channel. */
export { ENRICHMENT_CHANNEL, enqueueEnrichment, type EnrichmentRequest } from './enrichment.jobs.js';
