import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { DAY_MS, HOUR_MS, type Clock } from '../../lib/clock.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

/** Submissions deleted per transaction. */
const BATCH = 500;

/**
 * Forgets form submissions older than the retention (FORM_SUBMISSION_RETENTION_DAYS,
 * docs/privacy.md), oldest first, a batch per transaction: with each go its enrichment job and the
 * visitor's identity copied onto the session it marked (the session stays, as anonymous
 * analytics, until its own retention). The person's log entry stays: it is the person's history,
 * erased with the person. Operator code: it serves every tenant. Returns how many it removed.
 */
export async function pruneFormSubmissions(db: Kysely<DB>, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS).toISOString();
  const old = await db
    .selectFrom('form_submissions')
    .select(['id', 'tenant_id'])
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  if (old.length === 0) return 0;
  const ids = old.map((r) => r.id);
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('audience_sessions')
      .set({
        form_submission_id: '',
        form_submission_identifier: '',
        form_submission_email: '',
        form_submission_phone: '',
      })
      .where('form_submission_id', 'in', ids)
      .execute();
    await trx.deleteFrom('enrichment_jobs').where('form_submission_id', 'in', ids).execute();
    await trx.deleteFrom('form_submissions').where('id', 'in', ids).execute();
  });
  return old.length;
}

/** Runs the pruning every hour (and at once again while there is a backlog). */
export function formSubmissionRetentionWorkers(ctx: WorkerContext): BackgroundWorker[] {
  return [
    pollingWorker({
      name: 'form-submission-retention',
      intervalMs: HOUR_MS,
      logger: ctx.logger,
      tick: async () => {
        const pruned = await pruneFormSubmissions(
          ctx.database.kysely,
          ctx.clock,
          ctx.config.formSubmissionRetentionDays,
        );
        if (pruned > 0) ctx.logger.info({ formSubmissions: pruned }, 'forgot form submissions past their retention');
        return pruned === BATCH;
      },
    }),
  ];
}
