import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Webhook subscriptions managed over the API (issue 12): a deleted subscription is kept, marked
 * (`deleted_at`), so deleting one costs no more than deactivating it, whatever its history; and
 * a subscription's deliveries are listed newest first as one index range.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema.alterTable('webhook_subscriptions').addColumn('deleted_at', t.timestamp).execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription_id')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'id'])
    .execute();
}
