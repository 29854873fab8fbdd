/**
 * What the composition root takes from webhooks besides the module: the fan-out it hands to the
 * outbox (main/wiring.ts), and the re-sealing of signing secrets that migration 0017 is given.
 */
export { queueDeliveries } from './webhooks.fan-out.js';
export { resealWithKeyOf } from './webhooks.secret-box.js';
export { getSubscription, listDeliveries, listSubscriptions, replayDelivery } from './webhooks.service.js';
