import { Type, type Static } from '@sinclair/typebox';
import {
  Envelope,
  Nullable,
  NullableTimestamp,
  PaginationQuery,
  ResourceId,
  StringEnum,
  Timestamp,
  strict,
} from '../../http/schemas.js';
import { EVENT_TYPES } from '../../outbox/events.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../net/address-policy.js';

/** The OpenAPI tag of the endpoints beyond the spec's endpoint 21 (docs/api.md, Webhooks). */
export const WEBHOOKS_EXTENSION_TAG = 'Webhooks (extension)';

/** How long the previous secret keeps signing after a rotation, unless the request says otherwise. */
export const DEFAULT_ROTATION_GRACE_HOURS = 24;
export const MAX_ROTATION_GRACE_HOURS = 24 * 30;

const EventName = StringEnum(EVENT_TYPES, { description: EVENT_TYPES.join(', ') });

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Repeating the key with the same request returns the first result (header Idempotent-Replayed: true).',
});

export const WebhookSubscription = Type.Object(
  {
    subscriptionId: Type.String(),
    url: Type.String({ format: 'uri' }),
    events: Type.Union([Type.Array(EventName), Type.Null()], {
      description: 'The event names delivered to this subscription (never null in this service).',
    }),
    active: Type.Boolean(),
    deactivatedReason: Nullable(
      StringEnum(['api', 'operator', 'gone', 'failing'], {
        description:
          'Why an inactive subscription is inactive: api (by the tenant), operator, gone (the receiver answered 410), ' +
          'failing (every attempt failed for 5 days). Null while active.',
      }),
    ),
    previousSecretExpiresAt: {
      ...NullableTimestamp,
      description: 'After a secret rotation: until when deliveries are also signed with the previous secret.',
    },
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'WebhookSubscription', ...strict },
);

export const WebhookSubscriptionCreated = Type.Object(
  {
    ...WebhookSubscription.properties,
    signingSecret: Type.String({
      description:
        'whsec_ + base64. Shown only in this response (and in a rotation’s): store it now. Verify deliveries with it.',
    }),
  },
  { $id: 'WebhookSubscriptionCreated', ...strict },
);

const WebhookUrl = Type.String({
  format: 'uri',
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: 'http or https, no credentials, not a private address.',
});

const WebhookEvents = Type.Array(EventName, {
  minItems: 1,
  maxItems: 50,
  description: 'At least one event name; duplicates are ignored.',
});

export const WebhookSubscriptionCreateBody = Type.Object(
  {
    url: WebhookUrl,
    events: WebhookEvents,
    active: Type.Boolean({ default: true }),
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  strict,
);

export const WebhookSubscriptionPatchBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(WebhookEvents),
    active: Type.Optional(
      Type.Boolean({
        description: 'false closes the pending deliveries as failed; true starts receiving new events again.',
      }),
    ),
  },
  { ...strict, description: 'Absent fields are unchanged.' },
);

export const WebhookSubscriptionParams = Type.Object({ webhook_subscription_id: ResourceId }, strict);
export const WebhookDeliveryParams = Type.Object({ webhook_delivery_id: ResourceId }, strict);

export const WebhookSubscriptionListQuery = Type.Object({ ...PaginationQuery }, strict);
export const WebhookSubscriptionList = Envelope(Type.Ref('WebhookSubscription'), { $id: 'WebhookSubscriptionList' });

export const WebhookSecretRotateBody = Type.Object(
  {
    gracePeriodHours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_GRACE_HOURS,
        description: `How long the previous secret keeps signing beside the new one (default ${DEFAULT_ROTATION_GRACE_HOURS}; 0 revokes it at once).`,
      }),
    ),
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  { ...strict, description: '`{}` or some of the fields.' },
);

export const WebhookDeliveryReplayBody = Type.Object(
  { idempotencyKey: Type.Optional(IdempotencyKey) },
  { ...strict, description: '`{}` or `{ idempotencyKey }`.' },
);

export const WebhookDelivery = Type.Object(
  {
    deliveryId: Type.String(),
    subscriptionId: Type.String(),
    eventId: Type.String({ description: 'Also the webhook-id header of every attempt.' }),
    eventType: EventName,
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ minimum: 0, description: 'Attempts since the delivery (or its last replay) started.' }),
    lastAttemptAt: NullableTimestamp,
    lastStatusCode: Nullable(Type.Integer({ description: 'The HTTP status of the last attempt; null if none came.' })),
    lastError: Nullable(Type.String({ description: 'Why the last attempt failed without a status, e.g. timeout.' })),
    nextAttemptAt: {
      ...NullableTimestamp,
      description: 'Pending: the next attempt is not before this time. Null once the delivery is closed.',
    },
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
  },
  { $id: 'WebhookDelivery', ...strict },
);

export const WebhookDeliveryListQuery = Type.Object(
  { ...PaginationQuery, status: Type.Optional(StringEnum(DELIVERY_STATUSES)) },
  strict,
);
export const WebhookDeliveryList = Envelope(Type.Ref('WebhookDelivery'), {
  $id: 'WebhookDeliveryList',
  nullableTotal: true,
});

export type WebhookSubscription = Static<typeof WebhookSubscription>;
export type WebhookSubscriptionCreated = Static<typeof WebhookSubscriptionCreated>;
export type WebhookSubscriptionCreateBody = Static<typeof WebhookSubscriptionCreateBody>;
export type WebhookSubscriptionPatchBody = Static<typeof WebhookSubscriptionPatchBody>;
export type WebhookSecretRotateBody = Static<typeof WebhookSecretRotateBody>;
export type WebhookDeliveryReplayBody = Static<typeof WebhookDeliveryReplayBody>;
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export type WebhookDeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const webhookSchemas = [WebhookSubscription, WebhookSubscriptionCreated, WebhookDelivery];
