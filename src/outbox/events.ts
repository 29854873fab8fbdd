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

/** The channel appendEvent wakes once the event's transaction has committed ("new events"). */
export const EVENTS_CHANNEL = 'events';

/**
 * What else an appended event sets off inside its own transaction (the webhooks module queues a
 * delivery per subscription that asked for it). This plumbing names no resource: the composition
 * root hands the fan-out in (main/wiring.ts), once per process, before any event is appended.
 */
export type EventFanOut = (tx: TenantScope, event: DomainEvent) => Promise<void>;

let fanOut: EventFanOut = () => Promise.resolve();

export function fanOutEventsTo(handler: EventFanOut): void {
  fanOut = handler;
}

/**
 * Records an event in the outbox. Call it with the scope of the transaction that makes the change,
 * so that the event exists if and only if the change commits; so do what the fan-out queues for
 * it (who gets an event is decided in that transaction, never later). The commit wakes
 * EVENTS_CHANNEL.
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
    await fanOut(tx, event);
    tx.afterCommit(EVENTS_CHANNEL);
  });
  return event;
}
