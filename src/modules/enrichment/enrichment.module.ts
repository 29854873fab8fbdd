import type { ServiceModule } from '../module.js';
import { enrichmentWorker } from './enrichment.worker.js';

/** The enrichment of form submissions: no routes, one worker (docs/forms.md, Enrichment). */
export const enrichmentModule: ServiceModule = {
  name: 'enrichment',
  workers: (ctx) => [enrichmentWorker(ctx)],
};
