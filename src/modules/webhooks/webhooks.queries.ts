import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB, WebhookDeliveryStatus, WebhookSubscriptionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

const SUBSCRIPTION_COLUMNS = [
  'id',
  'tenant_id',
  'url',
  'events',
  'active',
  'deactivated_reason',
  'failing_since',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;

export async function insertSubscription(
  scope: TenantScope,
  values: Omit<Insertable<WebhookSubscriptionsTable>, 'tenant_id'>,
): Promise<void> {
  await scope.insertInto('webhook_subscriptions', values).execute();
}

// Operator queries below: the CLI works across tenants, so they take the raw database.

export async function listSubscriptions(db: Kysely<DB>, filter: { tenantId?: string }) {
  let query = db.selectFrom('webhook_subscriptions').select(SUBSCRIPTION_COLUMNS).orderBy('id', 'desc');
  if (filter.tenantId) query = query.where('tenant_id', '=', filter.tenantId);
  return query.execute();
}

export async function findSubscription(db: Kysely<DB>, id: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .select([...SUBSCRIPTION_COLUMNS, 'secret', 'previous_secret'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listDeliveries(
  db: Kysely<DB>,
  filter: {
    tenantId?: string;
    subscriptionId?: string;
    eventId?: string;
    status?: WebhookDeliveryStatus;
    limit: number;
  },
) {
  let query = db.selectFrom('webhook_deliveries').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.tenantId) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.subscriptionId) query = query.where('subscription_id', '=', filter.subscriptionId);
  if (filter.eventId) query = query.where('event_id', '=', filter.eventId);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query.execute();
}

export async function listAttempts(db: Kysely<DB>, deliveryId: string) {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();
}

export async function deactivateSubscription(db: Kysely<DB>, id: string, reason: string, nowIso: string) {
  const updated = await db
    .updateTable('webhook_subscriptions')
    .set({ active: false, deactivated_reason: reason, updated_at: nowIso })
    .where('id', '=', id)
    .where('active', '=', true)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

export async function closePendingDeliveries(db: Kysely<DB>, subscriptionId: string, error: string, nowIso: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: error, completed_at: nowIso })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
}

export async function reactivateSubscription(db: Kysely<DB>, id: string, nowIso: string) {
  await db
    .updateTable('webhook_subscriptions')
    .set({ active: true, deactivated_reason: null, failing_since: null, updated_at: nowIso })
    .where('id', '=', id)
    .execute();
}

export async function updateSecrets(
  db: Kysely<DB>,
  id: string,
  changes: Pick<
    Updateable<WebhookSubscriptionsTable>,
    'secret' | 'previous_secret' | 'previous_secret_expires_at' | 'updated_at'
  >,
) {
  await db.updateTable('webhook_subscriptions').set(changes).where('id', '=', id).execute();
}

export async function listSealedSecrets(db: Kysely<DB>) {
  return db.selectFrom('webhook_subscriptions').select(['id', 'secret', 'previous_secret']).execute();
}

export async function eventExists(db: Kysely<DB>, eventId: string): Promise<boolean> {
  return (await db.selectFrom('events').select('id').where('id', '=', eventId).executeTakeFirst()) !== undefined;
}

/**
 * Starts deliveries over (pending, no attempts, due now): those of one event, or the failed ones
 * created since a time; of active subscriptions only. Returns how many.
 */
export async function restartDeliveries(
  db: Kysely<DB>,
  nowIso: string,
  filter: { eventId?: string; failedSince?: string; subscriptionId?: string },
): Promise<number> {
  let query = db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: nowIso, completed_at: null })
    .where('subscription_id', 'in', (sub) =>
      sub.selectFrom('webhook_subscriptions').select('id').where('active', '=', true),
    );
  if (filter.eventId !== undefined) query = query.where('event_id', '=', filter.eventId);
  if (filter.failedSince !== undefined) {
    query = query.where('status', '=', 'failed').where('created_at', '>=', filter.failedSince);
  }
  if (filter.subscriptionId) query = query.where('subscription_id', '=', filter.subscriptionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}
