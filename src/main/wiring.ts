import { queueDeliveries } from '../modules/webhooks/index.js';
import { fanOutEventsTo } from '../outbox/events.js';

/**
 * What every process of the service sets up the same way before it appends an event (the server,
 * the workers' thread and the CLI; the tests and the bench too): each event fans out, in its own
 * transaction, to the webhook deliveries it is due for.
 */
export function wireEventFanOut(): void {
  fanOutEventsTo(queueDeliveries);
}
