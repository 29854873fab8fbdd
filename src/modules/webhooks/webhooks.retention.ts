import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';

/**
 * Forgets what is older than the retention: attempts, closed deliveries, and events no pending
 * delivery still needs (the payload lives in the event, so it goes with it).
 */
export async function pruneWebhookHistory(db: Kysely<DB>, clock: Clock, retentionDays: number) {
  const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS).toISOString();
  return db.transaction().execute(async (trx) => {
    const attempts = await trx.deleteFrom('webhook_attempts').where('attempted_at', '<', cutoff).executeTakeFirst();
    const deliveries = await trx
      .deleteFrom('webhook_deliveries')
      .where('created_at', '<', cutoff)
      .where('status', '!=', 'pending')
      .executeTakeFirst();
    const events = await trx
      .deleteFrom('events')
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries')
              .select('webhook_deliveries.id')
              .whereRef('webhook_deliveries.event_id', '=', 'events.id'),
          ),
        ),
      )
      .executeTakeFirst();
    return {
      attempts: Number(attempts.numDeletedRows),
      deliveries: Number(deliveries.numDeletedRows),
      events: Number(events.numDeletedRows),
    };
  });
}
