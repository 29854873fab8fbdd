import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, strict, StringEnum } from '../../http/schemas.js';
import { EVENT_TYPES } from '../../outbox/events.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../net/address-policy.js';

export const EventName = StringEnum(EVENT_TYPES, { description: EVENT_TYPES.join(', ') });

export const WebhookSubscription = Type.Object(
  {
    subscriptionId: Type.String(),
    url: Type.String({ format: 'uri' }),
    events: Type.Union([Type.Array(EventName), Type.Null()], {
      description: 'The event names delivered to this subscription (never null in this service).',
    }),
    active: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'WebhookSubscription', ...strict },
);

export const WebhookSubscriptionCreated = Type.Object(
  {
    ...WebhookSubscription.properties,
    signingSecret: Type.String({
      description: 'whsec_ + base64. Shown only in this response: store it now. Verify deliveries with it.',
    }),
  },
  { $id: 'WebhookSubscriptionCreated', ...strict },
);

export const WebhookSubscriptionCreateBody = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description: 'http or https, no credentials, not a private address.',
    }),
    events: Type.Array(EventName, {
      minItems: 1,
      maxItems: 50,
      description: 'At least one event name; duplicates are ignored.',
    }),
    active: Type.Boolean({ default: true }),
  },
  strict,
);

export type WebhookSubscription = Static<typeof WebhookSubscription>;
export type WebhookSubscriptionCreated = Static<typeof WebhookSubscriptionCreated>;
export type WebhookSubscriptionCreateBody = Static<typeof WebhookSubscriptionCreateBody>;

export const webhookSchemas = [WebhookSubscription, WebhookSubscriptionCreated];
