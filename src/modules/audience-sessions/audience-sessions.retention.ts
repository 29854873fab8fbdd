import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Page-hours deleted per transaction. */
const BATCH = 50;

/**
 * Forgets sessions older than the retention (SESSION_RETENTION_DAYS), a whole hour of a page at
 * a time: its sessions, the agent's messages of those sessions and its hourly counts go in the same transaction, so every count stays
 * exact. Driven by the hourly counts (one row per page and hour), so each delete is a range of an
 * index. Operator code: it serves every tenant. Returns how many page-hours it removed.
 */
export async function pruneSessions(db: Kysely<DB>, clock: Clock, retentionDays: number): Promise<number> {
  const cutoff = new Date(Math.floor((clock.now().getTime() - retentionDays * DAY_MS) / HOUR_MS) * HOUR_MS);
  const hours = await db
    .selectFrom('audience_session_hours')
    .select(['tenant_id', 'page_id', 'hour'])
    // a literal, so that SQLite uses the partial index audience_session_hours_page_hour
    .where('audience_id', '=', sql.lit(''))
    .where('hour', '<', cutoff.toISOString())
    .orderBy('hour')
    .limit(BATCH)
    .execute();
  for (const h of hours) {
    const end = new Date(Date.parse(h.hour) + HOUR_MS).toISOString();
    await db.transaction().execute(async (trx) => {
      // What was asked to the page's agent in those visits goes with them (docs/privacy.md).
      await trx
        .deleteFrom('agent_messages')
        .where('tenant_id', '=', h.tenant_id)
        .where('session_id', 'in', (eb) =>
          eb
            .selectFrom('audience_sessions')
            .select('audience_sessions.id')
            .where('audience_sessions.tenant_id', '=', h.tenant_id)
            .where('audience_sessions.page_id', '=', h.page_id)
            .where('audience_sessions.session_started_at', '>=', h.hour)
            .where('audience_sessions.session_started_at', '<', end),
        )
        .execute();
      await trx
        .deleteFrom('audience_sessions')
        .where('tenant_id', '=', h.tenant_id)
        .where('page_id', '=', h.page_id)
        .where('session_started_at', '>=', h.hour)
        .where('session_started_at', '<', end)
        .execute();
      await trx
        .deleteFrom('audience_session_hours')
        .where('tenant_id', '=', h.tenant_id)
        .where('page_id', '=', h.page_id)
        .where('hour', '=', h.hour)
        .execute();
    });
  }
  return hours.length;
}

/** Runs the pruning every hour (and at once again while there is a backlog). */
export function sessionRetentionWorkers(ctx: WorkerContext): BackgroundWorker[] {
  return [
    pollingWorker({
      name: 'session-retention',
      intervalMs: 60 * 60 * 1000,
      logger: ctx.logger,
      tick: async () => {
        const pruned = await pruneSessions(ctx.database.kysely, ctx.clock, ctx.config.sessionRetentionDays);
        if (pruned > 0) ctx.logger.info({ pageHours: pruned }, 'forgot audience sessions past their retention');
        return pruned === BATCH;
      },
    }),
  ];
}
