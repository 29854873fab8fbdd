import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { withIdempotency, type StoredResponse } from '../../idempotency/idempotency.js';
import { HOUR_MS, isoNow, type Clock } from '../../lib/clock.js';
import { EVENTS_CHANNEL } from '../../outbox/events.js';
import { newId } from '../../lib/ids.js';
import { webhookUrlProblem, type AddressPolicy, type PortRule } from '../../net/address-policy.js';
import type { SecretBox } from './webhooks.secret-box.js';
import { newSigningSecret } from './webhooks.signing.js';
import { deactivateSubscription } from './webhooks.delivery.js';
import * as q from './webhooks.queries.js';
import {
  DEFAULT_ROTATION_GRACE_HOURS,
  type WebhookDelivery,
  type WebhookDeliveryReplayBody,
  type WebhookDeliveryStatus,
  type WebhookSecretRotateBody,
  type WebhookSubscription,
  type WebhookSubscriptionCreateBody,
  type WebhookSubscriptionCreated,
  type WebhookSubscriptionPatchBody,
} from './webhooks.schemas.js';

/** The tenant API of webhook subscriptions (docs/api.md, Webhooks); the operator CLI acts through it. */

export interface WebhookDeps {
  secretBox: SecretBox;
  /** The creation-time address check (WEBHOOK_ALLOW_PRIVATE_NETWORKS lifts it). */
  policy: AddressPolicy;
  /** WEBHOOK_SUBSCRIPTIONS_PER_TENANT: the most live subscriptions a tenant may have. */
  maxSubscriptions: number;
  /** The ports a URL may name (80, 443 and WEBHOOK_ALLOWED_PORTS). */
  ports: PortRule;
  /** Production: only `https:` URLs (httpsOnlyIn). */
  httpsOnly?: boolean;
}

/** Who switches a subscription on or off; becomes its `deactivatedReason`. */
export type WebhookActor = 'api' | 'operator';

export function toSubscription(row: q.SubscriptionRow): WebhookSubscription {
  return {
    subscriptionId: row.id,
    url: row.url,
    events: row.events as WebhookSubscription['events'],
    active: row.active,
    deactivatedReason: row.active ? null : (row.deactivated_reason as WebhookSubscription['deactivatedReason']),
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toDelivery(row: q.DeliveryRow): WebhookDelivery {
  return {
    deliveryId: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type as WebhookDelivery['eventType'],
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/**
 * What an idempotency key keeps of a response that shows a secret: the secret sealed as it is in
 * the subscription row, never in clear (idempotency records are plain JSON for 48 h).
 */
type SealedSecretResponse = WebhookSubscription & { sealedSigningSecret: string };

function reveal(
  box: SecretBox,
  stored: StoredResponse<SealedSecretResponse>,
): StoredResponse<WebhookSubscriptionCreated> {
  const { sealedSigningSecret, ...subscription } = stored.body;
  return {
    ...stored,
    body: { ...subscription, signingSecret: box.open(sealedSigningSecret, subscription.subscriptionId) },
  };
}

/** What a deleted subscription keeps of its signing secret: nothing (the column is NOT NULL). */
const ERASED_SECRET = '';

function checkUrl(url: string, { policy, ports, httpsOnly }: Pick<WebhookDeps, 'policy' | 'ports' | 'httpsOnly'>) {
  const problem = webhookUrlProblem(url, policy, ports, httpsOnly);
  if (problem !== null) throw validationFailed('/body/url', problem);
}

async function requireSubscription(scope: TenantScope, id: string) {
  const row = await q.findSubscription(scope, id);
  if (row === undefined) throw notFound('webhook subscription', id);
  return row;
}

/**
 * Endpoint 21. The URL must be http(s), without credentials, and not an IP literal in a blocked
 * range (422 at /body/url); the same rule is enforced again on every connection. Duplicate event
 * names are collapsed (first occurrence kept). At most `maxSubscriptions` live subscriptions per
 * tenant, active or not (422 webhook_subscription_limit at /body). The secret is returned here
 * once and stored sealed.
 */
export async function createSubscription(
  scope: TenantScope,
  clock: Clock,
  deps: WebhookDeps,
  body: WebhookSubscriptionCreateBody,
): Promise<StoredResponse<WebhookSubscriptionCreated>> {
  checkUrl(body.url, deps);
  const stored = await withIdempotency<SealedSecretResponse>(
    scope,
    clock,
    { operation: 'webhookSubscriptions.create', key: body.idempotencyKey, body },
    async (tx) => {
      // Serializes this tenant's creations, so concurrent ones cannot all pass the count.
      await tx.lock('webhook_subscriptions');
      if ((await q.countSubscriptions(tx)) >= deps.maxSubscriptions) {
        throw new AppError(
          'webhook_subscription_limit',
          `A tenant may have at most ${deps.maxSubscriptions} webhook subscriptions; delete one first.`,
          [{ path: '/body', message: `at most ${deps.maxSubscriptions} subscriptions per tenant` }],
        );
      }
      const events = [...new Set(body.events)];
      const now = isoNow(clock);
      const id = newId('webhookSubscription');
      const active = body.active ?? true;
      const secret = deps.secretBox.seal(newSigningSecret(), id);
      await q.insertSubscription(tx, {
        id,
        url: body.url,
        events: json(events),
        active,
        secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        deactivated_reason: active ? null : 'api',
        failing_since: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      });
      return {
        status: 201,
        body: { ...toSubscription(await requireSubscription(tx, id)), sealedSigningSecret: secret },
      };
    },
  );
  return reveal(deps.secretBox, stored);
}

export async function getSubscription(scope: TenantScope, id: string): Promise<WebhookSubscription> {
  return toSubscription(await requireSubscription(scope, id));
}

export async function listSubscriptions(scope: TenantScope, window: KeysetWindow) {
  const [rows, totalCount] = await Promise.all([q.listTenantSubscriptions(scope, window), q.countSubscriptions(scope)]);
  return { items: rows.map(toSubscription), totalCount };
}

/**
 * Switches a subscription off (its pending deliveries are closed as failed, as when the receiver
 * answers 410) or on again (its failure streak forgotten; closed deliveries stay closed: replay
 * them). Returns whether anything changed. Inside the caller's transaction.
 */
async function setActive(
  tx: TenantScope,
  row: q.SubscriptionRow,
  active: boolean,
  actor: WebhookActor,
  now: string,
): Promise<boolean> {
  if (row.active === active) return false;
  if (!active) {
    // The one deactivation path, shared with the delivery engine; the row is this tenant's (read
    // through the scope above), so the by-id statements stay within the tenant.
    await deactivateSubscription(tx.unscopedDb(), row.id, actor, now);
  } else {
    await q.updateSubscription(tx, row.id, {
      active: true,
      deactivated_reason: null,
      failing_since: null,
      updated_at: now,
    });
  }
  return true;
}

/**
 * PATCH: `url` (the creation rules), `events` (1..50, duplicates collapsed) and `active`. Absent
 * fields, and fields that already hold the value, change nothing (`updatedAt` stays). A new URL
 * or event list applies to what is sent from now on, pending deliveries included.
 */
export async function patchSubscription(
  scope: TenantScope,
  clock: Clock,
  deps: Pick<WebhookDeps, 'policy' | 'ports' | 'httpsOnly'>,
  id: string,
  body: WebhookSubscriptionPatchBody,
): Promise<WebhookSubscription> {
  if (body.url !== undefined) checkUrl(body.url, deps);
  return scope.transaction(async (tx) => {
    const row = await requireSubscription(tx, id);
    const now = isoNow(clock);
    const changes: Parameters<typeof q.updateSubscription>[2] = {};
    if (body.url !== undefined && body.url !== row.url) changes.url = body.url;
    if (body.events !== undefined) {
      const events = [...new Set(body.events)];
      if (JSON.stringify(events) !== JSON.stringify(row.events)) changes.events = json(events);
    }
    if (Object.keys(changes).length > 0) await q.updateSubscription(tx, id, { ...changes, updated_at: now });
    if (body.active !== undefined) await setActive(tx, row, body.active, 'api', now);
    return toSubscription(await requireSubscription(tx, id));
  });
}

/** Operator deactivation / reactivation (the CLI): the same rules as PATCH `active`. */
export async function switchSubscription(
  scope: TenantScope,
  clock: Clock,
  id: string,
  active: boolean,
  actor: WebhookActor,
) {
  return scope.transaction(async (tx) => {
    await setActive(tx, await requireSubscription(tx, id), active, actor, isoNow(clock));
    return requireSubscription(tx, id);
  });
}

/**
 * DELETE: the subscription is deactivated (pending deliveries closed as failed) and marked
 * deleted, in one transaction: a 404 everywhere afterwards, and it no longer counts towards the
 * limit. The row stays (marked) so its delivery history is pruned like any other.
 */
export async function deleteSubscription(scope: TenantScope, clock: Clock, id: string): Promise<void> {
  await scope.transaction(async (tx) => {
    const row = await requireSubscription(tx, id);
    const now = isoNow(clock);
    await setActive(tx, row, false, 'api', now);
    // The row stays for its deliveries' history; its signing secrets go (a sealed secret is still
    // a secret: with the key, it signs as the tenant's receiver expects).
    await q.updateSubscription(tx, id, {
      deleted_at: now,
      updated_at: now,
      secret: ERASED_SECRET,
      previous_secret: null,
      previous_secret_expires_at: null,
    });
  });
}

/**
 * Issues a new signing secret, shown once in the answer. Until `gracePeriodHours` (default 24)
 * have passed, deliveries carry a signature by the new and one by the previous secret, so the
 * receiver can switch whenever it likes; 0 drops the previous secret at once (a leaked secret).
 * Only the secret current at the rotation stays valid: rotating again within a grace period
 * ends the older one's.
 */
export async function rotateSecret(
  scope: TenantScope,
  clock: Clock,
  box: SecretBox,
  id: string,
  body: WebhookSecretRotateBody,
): Promise<StoredResponse<WebhookSubscriptionCreated>> {
  const graceHours = body.gracePeriodHours ?? DEFAULT_ROTATION_GRACE_HOURS;
  const stored = await withIdempotency<SealedSecretResponse>(
    scope,
    clock,
    // The id is part of what the key stands for: the same key for another subscription is a reuse.
    { operation: 'webhookSubscriptions.rotateSecret', key: body.idempotencyKey, body: { ...body, id } },
    async (tx) => {
      // Two concurrent rotations would each keep the same "previous" secret, and one caller's
      // new secret would be silently replaced: take them one after the other.
      await tx.lock(`webhook_secret:${id}`);
      const row = await requireSubscription(tx, id);
      const now = clock.now();
      const expires = graceHours > 0 ? new Date(now.getTime() + graceHours * HOUR_MS).toISOString() : null;
      const secret = box.seal(newSigningSecret(), id);
      await q.updateSubscription(tx, id, {
        secret,
        previous_secret: expires === null ? null : row.secret,
        previous_secret_expires_at: expires,
        updated_at: now.toISOString(),
      });
      return {
        status: 200,
        body: { ...toSubscription(await requireSubscription(tx, id)), sealedSigningSecret: secret },
      };
    },
  );
  return reveal(box, stored);
}

/** The deliveries of a live subscription, newest first; `totalCount` is null (histories are long). */
export async function listDeliveries(
  scope: TenantScope,
  subscriptionId: string,
  status: WebhookDeliveryStatus | undefined,
  window: KeysetWindow,
) {
  await requireSubscription(scope, subscriptionId);
  const rows = await q.listSubscriptionDeliveries(scope, subscriptionId, status, window);
  return { items: rows.map(toDelivery), totalCount: null };
}

/**
 * Sends a closed delivery again: the same row starts over (pending, attempt count 0, due now;
 * its earlier attempts stay recorded), with the same event and webhook-id. A pending delivery is
 * 409 webhook_delivery_pending (it is queued or being attempted right now, and goes out anyway);
 * an inactive subscription's is 409 webhook_subscription_inactive (reactivate it first).
 */
export async function replayDelivery(
  scope: TenantScope,
  clock: Clock,
  id: string,
  body: WebhookDeliveryReplayBody,
): Promise<StoredResponse<WebhookDelivery>> {
  return withIdempotency<WebhookDelivery>(
    scope,
    clock,
    { operation: 'webhookDeliveries.replay', key: body.idempotencyKey, body: { ...body, id } },
    async (tx) => {
      const row = await q.findDelivery(tx, id);
      if (row === undefined) throw notFound('webhook delivery', id);
      const pending = () =>
        new AppError(
          'webhook_delivery_pending',
          'This delivery is still pending: it is queued or being attempted, and will be sent anyway.',
        );
      if (row.status === 'pending') throw pending();
      if (!row.subscription_active) {
        throw new AppError(
          'webhook_subscription_inactive',
          'The subscription of this delivery is inactive: reactivate it (PATCH active: true) first.',
          [],
          undefined,
          { subscriptionId: row.subscription_id },
        );
      }
      // Guarded by status: of two concurrent replays, one restarts the delivery, the other is told.
      if (!(await q.restartDelivery(tx, id, isoNow(clock)))) throw pending();
      tx.afterCommit(EVENTS_CHANNEL);
      return { status: 202, body: toDelivery((await q.findDelivery(tx, id))!) };
    },
  );
}
