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

/**
 * Records an event in the outbox. Call it with the scope of the transaction that makes the change,
 * so that the event exists if and only if the change commits.
 */
export async function appendEvent(
  scope: TenantScope,
  clock: Clock,
  type: EventType,
  data: Record<string, unknown>,
): Promise<DomainEvent> {
  const event: DomainEvent = { id: newId('event'), type, timestamp: isoNow(clock), data };
  await scope.insertInto('events', { id: event.id, type, data: json(data), created_at: event.timestamp }).execute();
  return event;
}
