import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB, WebhookDeliveryStatus } from '../../db/schema.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound } from '../../http/errors.js';
import { isoNow, parseInstant, type Clock } from '../../lib/clock.js';
import type { SecretBox } from './webhooks.secret-box.js';
import * as q from './webhooks.queries.js';
import * as service from './webhooks.service.js';
import { toDelivery, toSubscription } from './webhooks.service.js';
import type { WebhookSubscription } from './webhooks.schemas.js';

/**
 * Operator administration (the CLI): works across tenants. What a tenant can do too (switch a
 * subscription on or off, rotate its secret) runs through the tenant service, in the scope of
 * the subscription's tenant: one code path for both.
 */

export type OperatorSubscription = WebhookSubscription & { tenantId: string; failingSince: string | null };

function toOperatorSubscription(row: q.SubscriptionRow): OperatorSubscription {
  return {
    ...toSubscription(row),
    tenantId: row.tenant_id,
    failingSince: row.failing_since,
  };
}

export async function listSubscriptions(db: Kysely<DB>, filter: { tenantId?: string }) {
  return (await q.listSubscriptions(db, filter)).map(toOperatorSubscription);
}

/** The scope of the tenant that owns a live subscription; 404 when there is none. */
async function scopeOfSubscription(database: Database, id: string): Promise<TenantScope> {
  const tenantId = await q.tenantOfSubscription(database.kysely, id);
  if (tenantId === undefined) throw notFound('webhook subscription', id);
  return TenantScope.of(database, tenantId);
}

export async function listDeliveries(
  db: Kysely<DB>,
  filter: { tenantId?: string; subscriptionId?: string; eventId?: string; status?: string; limit?: number },
) {
  const statuses: WebhookDeliveryStatus[] = ['pending', 'succeeded', 'failed'];
  if (filter.status !== undefined && !statuses.includes(filter.status as WebhookDeliveryStatus)) {
    throw new AppError('bad_request', `--status must be one of ${statuses.join(', ')}`);
  }
  const rows = await q.listDeliveries(db, {
    ...filter,
    status: filter.status as WebhookDeliveryStatus | undefined,
    limit: filter.limit ?? 100,
  });
  return rows.map((r) => ({ ...toDelivery(r), tenantId: r.tenant_id }));
}

export async function listAttempts(db: Kysely<DB>, deliveryId: string) {
  return (await q.listAttempts(db, deliveryId)).map((a) => ({
    attemptId: a.id,
    deliveryId: a.delivery_id,
    attemptedAt: a.attempted_at,
    statusCode: a.status_code,
    error: a.error,
    durationMs: a.duration_ms,
    responseBody: a.response_body,
  }));
}

export async function deactivate(database: Database, clock: Clock, id: string) {
  const scope = await scopeOfSubscription(database, id);
  return toOperatorSubscription(await service.switchSubscription(scope, clock, id, false, 'operator'));
}

/** Reactivates; failures counted so far are forgotten. Closed deliveries stay closed (replay them). */
export async function reactivate(database: Database, clock: Clock, id: string) {
  const scope = await scopeOfSubscription(database, id);
  return toOperatorSubscription(await service.switchSubscription(scope, clock, id, true, 'operator'));
}

/**
 * Issues a new secret (the tenant's rotate_secret): until the grace period ends, deliveries carry
 * a signature by the new and one by the old secret (space-separated).
 */
export async function rotateSecret(database: Database, clock: Clock, box: SecretBox, id: string, graceHours: number) {
  const scope = await scopeOfSubscription(database, id);
  const { body } = await service.rotateSecret(scope, clock, box, id, { gracePeriodHours: graceHours });
  return { ...body, tenantId: scope.tenantId };
}

/** Sends an event again to its subscriptions (or one of them): the deliveries start over. */
export async function replayEvent(db: Kysely<DB>, clock: Clock, eventId: string, subscriptionId?: string) {
  if (!(await q.eventExists(db, eventId))) throw notFound('event', eventId);
  const replayed = await q.restartDeliveries(db, isoNow(clock), { eventId, subscriptionId });
  return { eventId, replayed };
}

/** Sends again every failed delivery created since `since` (of one subscription, or all). */
export async function replayFailedSince(db: Kysely<DB>, clock: Clock, since: string, subscriptionId?: string) {
  const from = parseInstant(since);
  if (from === null) throw new AppError('bad_request', `--since must be an ISO 8601 time in years 0001–9999`);
  const replayed = await q.restartDeliveries(db, isoNow(clock), { failedSince: from, subscriptionId });
  return { since: from, replayed };
}

/** Re-seals every secret made with an older WEBHOOK_SECRET_KEY with the first (current) key. */
export async function reencryptSecrets(db: Kysely<DB>, box: SecretBox) {
  const rows = await q.listSealedSecrets(db);
  let reencrypted = 0;
  for (const row of rows) {
    if (!box.isStale(row.secret) && (row.previous_secret === null || !box.isStale(row.previous_secret))) continue;
    await q.updateSecrets(db, row.id, {
      secret: box.seal(box.open(row.secret, row.id), row.id),
      previous_secret: row.previous_secret === null ? null : box.seal(box.open(row.previous_secret, row.id), row.id),
    });
    reencrypted++;
  }
  return { keyId: box.currentKeyId, subscriptions: rows.length, reencrypted };
}
