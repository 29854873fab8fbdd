import type { ServiceModule } from '../module.js';
import { enrichmentRetentionWorker } from './enrichment.retention.js';
import { enrichmentWorker } from './enrichment.worker.js';

/** The enrichment of form submissions: no routes; the worker (docs/forms.md, Enrichment) and its retention (docs/privacy.md). */
export const enrichmentModule: ServiceModule = {
  name: 'enrichment',
  workers: (ctx) => [enrichmentWorker(ctx), enrichmentRetentionWorker(ctx)],
};
