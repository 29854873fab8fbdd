import type { Insertable, Kysely, Updateable } from 'kysely';
import { keysetAfter } from '../../db/keyset.js';
import type { DB, WebhookDeliveriesTable, WebhookDeliveryStatus, WebhookSubscriptionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const SUBSCRIPTION_COLUMNS = [
  'webhook_subscriptions.id',
  'webhook_subscriptions.tenant_id',
  'webhook_subscriptions.url',
  'webhook_subscriptions.events',
  'webhook_subscriptions.active',
  'webhook_subscriptions.deactivated_reason',
  'webhook_subscriptions.failing_since',
  'webhook_subscriptions.previous_secret_expires_at',
  'webhook_subscriptions.created_at',
  'webhook_subscriptions.updated_at',
] as const;

const DELIVERY_COLUMNS = [
  'webhook_deliveries.id',
  'webhook_deliveries.tenant_id',
  'webhook_deliveries.subscription_id',
  'webhook_deliveries.event_id',
  'webhook_deliveries.event_type',
  'webhook_deliveries.status',
  'webhook_deliveries.attempts',
  'webhook_deliveries.next_attempt_at',
  'webhook_deliveries.last_attempt_at',
  'webhook_deliveries.last_status_code',
  'webhook_deliveries.last_error',
  'webhook_deliveries.created_at',
  'webhook_deliveries.completed_at',
] as const;

const NEWEST_FIRST = (table: 'webhook_subscriptions' | 'webhook_deliveries') => [
  { ref: `${table}.id`, direction: 'desc' as const },
];

export type SubscriptionRow = Awaited<ReturnType<typeof listSubscriptions>>[number];
export type DeliveryRow = Awaited<ReturnType<typeof listDeliveries>>[number];

// Tenant queries: through the scope, and only ever about live (not deleted) subscriptions.

export async function insertSubscription(
  scope: TenantScope,
  values: Omit<Insertable<WebhookSubscriptionsTable>, 'tenant_id'>,
): Promise<void> {
  await scope.insertInto('webhook_subscriptions', values).execute();
}

/** The event types each active subscription of the tenant asked for (what an event fans out to). */
export async function activeSubscriptionEvents(scope: TenantScope) {
  return scope
    .selectFrom('webhook_subscriptions')
    .select(['webhook_subscriptions.id', 'webhook_subscriptions.events'])
    .where('webhook_subscriptions.active', '=', true)
    .execute();
}

/** Rows per statement when inserting many deliveries at once. */
const INSERT_CHUNK = 500;

export async function insertDeliveries(
  scope: TenantScope,
  rows: readonly Omit<Insertable<WebhookDeliveriesTable>, 'tenant_id'>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await scope.insertInto('webhook_deliveries', rows.slice(i, i + INSERT_CHUNK)).execute();
  }
}

export async function countSubscriptions(scope: TenantScope): Promise<number> {
  const row = await scope
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('webhook_subscriptions.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A live subscription of the tenant, with its sealed secrets. */
export async function findSubscription(scope: TenantScope, id: string) {
  return scope
    .selectFrom('webhook_subscriptions')
    .select([...SUBSCRIPTION_COLUMNS, 'webhook_subscriptions.secret'])
    .where('webhook_subscriptions.id', '=', id)
    .where('webhook_subscriptions.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listTenantSubscriptions(scope: TenantScope, window: KeysetWindow) {
  let query = scope
    .selectFrom('webhook_subscriptions')
    .select(SUBSCRIPTION_COLUMNS)
    .where('webhook_subscriptions.deleted_at', 'is', null);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST('webhook_subscriptions'), window.after));
  return query
    .orderBy('webhook_subscriptions.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

/** Changes a live subscription; false when there is none with that id. */
export async function updateSubscription(
  scope: TenantScope,
  id: string,
  changes: Omit<Updateable<WebhookSubscriptionsTable>, 'id' | 'tenant_id' | 'created_at'>,
): Promise<boolean> {
  const result = await scope
    .updateTable('webhook_subscriptions')
    .set(changes)
    .where('webhook_subscriptions.id', '=', id)
    .where('webhook_subscriptions.deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The deliveries of one subscription, newest first (index: subscription_id, id). */
export async function listSubscriptionDeliveries(
  scope: TenantScope,
  subscriptionId: string,
  status: WebhookDeliveryStatus | undefined,
  window: KeysetWindow,
) {
  let query = scope
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('webhook_deliveries.subscription_id', '=', subscriptionId);
  if (status !== undefined) query = query.where('webhook_deliveries.status', '=', status);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST('webhook_deliveries'), window.after));
  return query
    .orderBy('webhook_deliveries.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

/** A delivery of one of the tenant's live subscriptions, and whether that subscription is active. */
export async function findDelivery(scope: TenantScope, id: string) {
  return scope
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_subscriptions', 'webhook_subscriptions.id', 'webhook_deliveries.subscription_id')
    .select([...DELIVERY_COLUMNS, 'webhook_subscriptions.active as subscription_active'])
    .where('webhook_deliveries.id', '=', id)
    .where('webhook_subscriptions.deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Starts a closed delivery over: pending, no attempts, due now. A pending one is left alone (a
 * worker may hold it right now); false then.
 */
export async function restartDelivery(scope: TenantScope, id: string, nowIso: string): Promise<boolean> {
  const result = await scope
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: nowIso, completed_at: null })
    .where('webhook_deliveries.id', '=', id)
    .where('webhook_deliveries.status', '!=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// Operator queries below: the CLI works across tenants, so they take the raw database.

export async function listSubscriptions(db: Kysely<DB>, filter: { tenantId?: string }) {
  let query = db
    .selectFrom('webhook_subscriptions')
    .select(SUBSCRIPTION_COLUMNS)
    .where('deleted_at', 'is', null)
    .orderBy('id', 'desc');
  if (filter.tenantId) query = query.where('tenant_id', '=', filter.tenantId);
  return query.execute();
}

/** The tenant of a live subscription: operator commands act through that tenant's scope. */
export async function tenantOfSubscription(db: Kysely<DB>, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_subscriptions')
    .select('tenant_id')
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.tenant_id;
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
  let query = db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).orderBy('id', 'desc').limit(filter.limit);
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

/** The sealed secrets of every live subscription (a deleted one's are erased). */
export async function listSealedSecrets(db: Kysely<DB>) {
  return db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'secret', 'previous_secret'])
    .where('deleted_at', 'is', null)
    .execute();
}

export async function eventExists(db: Kysely<DB>, eventId: string): Promise<boolean> {
  return (await db.selectFrom('events').select('id').where('id', '=', eventId).executeTakeFirst()) !== undefined;
}

/**
 * Starts closed deliveries over (pending, no attempts, due now): those of one event, or the
 * failed ones created since a time; of active subscriptions only. Pending deliveries are left
 * alone: a worker may hold one right now, and it goes out anyway. Returns how many.
 */
export async function restartDeliveries(
  db: Kysely<DB>,
  nowIso: string,
  filter: { eventId?: string; failedSince?: string; subscriptionId?: string },
): Promise<number> {
  let query = db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: nowIso, completed_at: null })
    .where('status', '!=', 'pending')
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
