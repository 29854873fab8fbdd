import type { EventFanOut } from '../../outbox/events.js';
import { newId } from '../../lib/ids.js';
import * as q from './webhooks.queries.js';

/**
 * The webhooks' part of every appended event (the composition root hands it to the outbox): in
 * the event's own transaction, one pending delivery per active subscription of the tenant that
 * asked for its type. So a delivery exists exactly when its event does, subscriptions deactivated
 * or created later do not change who gets it, and the delivery worker reads one queue. The
 * event's commit wakes the delivery worker (EVENTS_CHANNEL).
 */
export const queueDeliveries: EventFanOut = async (tx, event) => {
  const subscriptions = await q.activeSubscriptionEvents(tx);
  await q.insertDeliveries(
    tx,
    subscriptions
      .filter((s) => s.events.includes(event.type))
      .map((s) => ({
        id: newId('webhookDelivery'),
        subscription_id: s.id,
        event_id: event.id,
        event_type: event.type,
        status: 'pending' as const,
        attempts: 0,
        next_attempt_at: event.timestamp,
        created_at: event.timestamp,
      })),
  );
};
