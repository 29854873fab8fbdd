import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { DAY_MS, HOUR_MS, type Clock } from '../../lib/clock.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

/** Jobs deleted per statement. */
const BATCH = 500;

/**
 * Forgets finished enrichment jobs (enriched or failed) whose end is older than the retention
 * (ENRICHMENT_JOB_RETENTION_DAYS, docs/privacy.md): each holds a copy of what the visitor typed
 * (email, name, company), needed only while the job may still run. Queued and running jobs stay.
 * Operator code: it serves every tenant. Returns how many it removed.
 */
export async function pruneEnrichmentJobs(db: Kysely<DB>, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS).toISOString();
  const old = await db
    .selectFrom('enrichment_jobs')
    .select('form_submission_id')
    .where('completed_at', 'is not', null)
    .where('completed_at', '<', cutoff)
    .where('status', 'in', ['enriched', 'failed'])
    .orderBy('completed_at')
    .limit(BATCH)
    .execute();
  if (old.length === 0) return 0;
  await db
    .deleteFrom('enrichment_jobs')
    .where(
      'form_submission_id',
      'in',
      old.map((r) => r.form_submission_id),
    )
    .where('status', 'in', ['enriched', 'failed'])
    .execute();
  return old.length;
}

/** Runs the pruning every hour (and at once again while there is a backlog). */
export function enrichmentRetentionWorker(ctx: WorkerContext): BackgroundWorker {
  return pollingWorker({
    name: 'enrichment-retention',
    intervalMs: HOUR_MS,
    logger: ctx.logger,
    tick: async () => {
      const pruned = await pruneEnrichmentJobs(ctx.database.kysely, ctx.clock, ctx.config.enrichmentJobRetentionDays);
      if (pruned > 0) ctx.logger.info({ enrichmentJobs: pruned }, 'forgot enrichment jobs past their retention');
      return pruned === BATCH;
    },
  });
}
