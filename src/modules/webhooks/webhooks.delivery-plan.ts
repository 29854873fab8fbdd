import type { Updateable } from 'kysely';
import type { WebhookDeliveriesTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import type { AttemptOutcome } from '../../net/http-client.js';
import { FAILING_DEACTIVATION_MS, deliveryRetryDelayMs, succeeded } from './webhooks.retry.js';

/** A delivery as claimed from the queue. */
export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_id: string;
  attempts: number;
}

/** The result of sending (or not sending) one claimed delivery. */
export interface AttemptResult {
  delivery: ClaimedDelivery;
  /** When the subscription's run of failures began (null: it is healthy). */
  failingSince: string | null;
  attemptedAt: string;
  /** null: the subscription is no longer active; the delivery is closed without an attempt. */
  outcome: AttemptOutcome | null;
}

/** What recording a batch of results changes, decided without touching the database. */
export interface RecordingPlan {
  attempts: {
    id: string;
    tenant_id: string;
    delivery_id: string;
    attempted_at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    response_body: string | null;
  }[];
  /** Deliveries that succeeded, by response status (successes differ only in id and status). */
  succeededByStatus: Map<number, string[]>;
  /** Failed attempts: the delivery waits for its next attempt, or is closed for good. */
  failed: { deliveryId: string; changes: Updateable<WebhookDeliveriesTable> }[];
  /** Deliveries of subscriptions that are no longer active: closed without an attempt. */
  closedInactive: string[];
  /** Subscriptions that had a success: their run of failures (if any) ends. */
  healthy: string[];
  /** Subscriptions whose run of failures begins now. */
  startFailing: string[];
  /** Subscriptions to deactivate, with the reason: 410 Gone, or failing for too long. */
  deactivate: Map<string, 'gone' | 'failing'>;
}

/**
 * Classifies a batch of attempt results (pure): Standard Webhooks semantics, Svix's retry
 * schedule with jitter (`random`), Retry-After, 410 deactivates at once, 5 days of failures
 * deactivate.
 */
export function planRecording(results: AttemptResult[], now: Date, random: () => number): RecordingPlan {
  const nowIso = now.toISOString();
  const plan: RecordingPlan = {
    attempts: [],
    succeededByStatus: new Map(),
    failed: [],
    closedInactive: [],
    healthy: [],
    startFailing: [],
    deactivate: new Map(),
  };
  const healthy = new Set<string>();
  const failing = new Map<string, string | null>();
  for (const { delivery, failingSince, attemptedAt, outcome } of results) {
    if (outcome === null) {
      plan.closedInactive.push(delivery.id);
      continue;
    }
    plan.attempts.push({
      id: newId('webhookAttempt'),
      tenant_id: delivery.tenant_id,
      delivery_id: delivery.id,
      attempted_at: attemptedAt,
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: outcome.durationMs,
      response_body: outcome.body,
    });
    if (succeeded(outcome)) {
      const ids = plan.succeededByStatus.get(outcome.statusCode!) ?? [];
      ids.push(delivery.id);
      plan.succeededByStatus.set(outcome.statusCode!, ids);
      healthy.add(delivery.subscription_id);
      continue;
    }
    const attemptsMade = delivery.attempts + 1;
    const changes: Updateable<WebhookDeliveriesTable> = {
      attempts: attemptsMade,
      last_attempt_at: attemptedAt,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
    };
    const delay = deliveryRetryDelayMs(attemptsMade, outcome, random);
    if (delay === null) Object.assign(changes, { status: 'failed', completed_at: nowIso });
    else changes.next_attempt_at = new Date(now.getTime() + delay).toISOString();
    plan.failed.push({ deliveryId: delivery.id, changes });
    failing.set(delivery.subscription_id, failingSince);
    if (outcome.statusCode === 410) plan.deactivate.set(delivery.subscription_id, 'gone');
    else if (failingSince !== null && now.getTime() - Date.parse(failingSince) >= FAILING_DEACTIVATION_MS) {
      plan.deactivate.set(delivery.subscription_id, 'failing');
    }
  }
  for (const id of healthy) failing.delete(id);
  plan.healthy = [...healthy];
  plan.startFailing = [...failing].filter(([, since]) => since === null).map(([id]) => id);
  return plan;
}
