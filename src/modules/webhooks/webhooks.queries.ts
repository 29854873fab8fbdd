import type { Insertable, Kysely } from 'kysely';
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
