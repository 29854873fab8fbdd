import { json } from '../db/json.js';
import type { TenantScope } from '../db/tenant-scope.js';
import { isoNow, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';

/** Every event type the service can emit (the spec's six), the names subscriptions choose from. */
export const EVENT_TYPES = [
  'page.version.created',
  'page.version.processed',
  'page.version.published',
  'form.submitted',
  'form.enriched',
  'form.enrichment_failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface DomainEvent {
  id: string;
  type: EventType;
  /** When the change happened (ISO 8601 UTC). */
  timestamp: string;
  data: Record<string, unknown>;
}

/** Channel that AppContext.notify / the worker runner use to say "new events are committed". */
export const EVENTS_CHANNEL = 'events';

const INSERT_CHUNK = 500;

/**
 * Records an event in the outbox. Call it with the scope of the transaction that makes the change,
 * so that the event exists if and only if the change commits.
 *
 * It also fans the event out, in that same transaction: one pending delivery per active webhook
 * subscription of the tenant that asked for this type. So a delivery exists exactly when its
 * event does, subscriptions deactivated or created later do not change who gets it, and the
 * delivery worker only ever reads one queue. After the commit, `notify(EVENTS_CHANNEL)`.
 */
export async function appendEvent(
  scope: TenantScope,
  clock: Clock,
  type: EventType,
  data: Record<string, unknown>,
): Promise<DomainEvent> {
  const event: DomainEvent = { id: newId('event'), type, timestamp: isoNow(clock), data };
  await scope.transaction(async (tx) => {
    await tx.insertInto('events', { id: event.id, type, data: json(data), created_at: event.timestamp }).execute();
    const subscriptions = await tx
      .selectFrom('webhook_subscriptions')
      .select(['id', 'events'])
      .where('active', '=', true)
      .execute();
    const deliveries = subscriptions
      .filter((s) => s.events.includes(type))
      .map((s) => ({
        id: newId('webhookDelivery'),
        subscription_id: s.id,
        event_id: event.id,
        event_type: type,
        status: 'pending' as const,
        attempts: 0,
        next_attempt_at: event.timestamp,
        created_at: event.timestamp,
      }));
    for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) {
      await tx.insertInto('webhook_deliveries', deliveries.slice(i, i + INSERT_CHUNK)).execute();
    }
  });
  return event;
}
