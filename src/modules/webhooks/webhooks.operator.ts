import type { Kysely } from 'kysely';
import type { DB, WebhookDeliveryStatus } from '../../db/schema.js';
import { AppError, notFound } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../outbox/secret-box.js';
import { newSigningSecret } from '../../outbox/signing.js';
import { deactivateSubscription } from './webhooks.delivery.js';
import * as q from './webhooks.queries.js';
import { toSubscription, type SubscriptionRow } from './webhooks.service.js';
import type { WebhookSubscription } from './webhooks.schemas.js';

/** Operator administration (the CLI): works across tenants, on the raw database. */

export type OperatorSubscription = WebhookSubscription & {
  tenantId: string;
  deactivatedReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
};

function toOperatorSubscription(row: SubscriptionRow): OperatorSubscription {
  return {
    ...toSubscription(row),
    tenantId: row.tenant_id,
    deactivatedReason: row.deactivated_reason,
    failingSince: row.failing_since,
    previousSecretExpiresAt: row.previous_secret_expires_at,
  };
}

export async function listSubscriptions(db: Kysely<DB>, filter: { tenantId?: string }) {
  return (await q.listSubscriptions(db, filter)).map(toOperatorSubscription);
}

async function requireSubscription(db: Kysely<DB>, id: string) {
  const row = await q.findSubscription(db, id);
  if (row === undefined) throw notFound('webhook subscription', id);
  return row;
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
  return rows.map((r) => ({
    deliveryId: r.id,
    tenantId: r.tenant_id,
    subscriptionId: r.subscription_id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
    lastAttemptAt: r.last_attempt_at,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at,
    completedAt: r.completed_at,
  }));
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

export async function deactivate(db: Kysely<DB>, clock: Clock, id: string) {
  await requireSubscription(db, id);
  await db.transaction().execute((trx) => deactivateSubscription(trx, id, 'operator', isoNow(clock)));
  return toOperatorSubscription((await requireSubscription(db, id)) as SubscriptionRow);
}

/** Reactivates; failures counted so far are forgotten. Closed deliveries stay closed (replay them). */
export async function reactivate(db: Kysely<DB>, clock: Clock, id: string) {
  await requireSubscription(db, id);
  await q.reactivateSubscription(db, id, isoNow(clock));
  return toOperatorSubscription((await requireSubscription(db, id)) as SubscriptionRow);
}

export const DEFAULT_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Issues a new secret. Until the grace period ends, deliveries carry a signature by the new and
 * one by the old secret (space-separated), so the receiver can switch whenever it likes.
 */
export async function rotateSecret(db: Kysely<DB>, clock: Clock, box: SecretBox, id: string, graceMs: number) {
  const row = await requireSubscription(db, id);
  const signingSecret = newSigningSecret();
  const now = clock.now();
  const expires = graceMs > 0 ? new Date(now.getTime() + graceMs).toISOString() : null;
  await q.updateSecrets(db, id, {
    secret: box.seal(signingSecret, id),
    previous_secret: expires ? row.secret : null,
    previous_secret_expires_at: expires,
    updated_at: now.toISOString(),
  });
  return { subscriptionId: id, signingSecret, previousSecretValidUntil: expires };
}

/** Sends an event again to its subscriptions (or one of them): the deliveries start over. */
export async function replayEvent(db: Kysely<DB>, clock: Clock, eventId: string, subscriptionId?: string) {
  if (!(await q.eventExists(db, eventId))) throw notFound('event', eventId);
  const replayed = await q.restartDeliveries(db, isoNow(clock), { eventId, subscriptionId });
  return { eventId, replayed };
}

/** Sends again every failed delivery created since `since` (of one subscription, or all). */
export async function replayFailedSince(db: Kysely<DB>, clock: Clock, since: string, subscriptionId?: string) {
  if (Number.isNaN(Date.parse(since))) throw new AppError('bad_request', `--since must be an ISO 8601 time`);
  const from = new Date(since).toISOString();
  const replayed = await q.restartDeliveries(db, isoNow(clock), { failedSince: from, subscriptionId });
  return { since: from, replayed };
}

/** Re-seals every secret made with an older SECRET_KEY with the first (current) key. */
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
