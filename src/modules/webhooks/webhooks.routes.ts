import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { sendIdempotent } from '../../idempotency/idempotency.js';
import { addressPolicy, httpsOnlyIn, portRule } from '../../net/address-policy.js';
import { secretBoxFor } from './webhooks.secret-box.js';
import {
  WEBHOOKS_EXTENSION_TAG,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookDeliveryReplayBody,
  WebhookSecretRotateBody,
  WebhookSubscriptionCreateBody,
  WebhookSubscriptionCreated,
  WebhookSubscriptionList,
  WebhookSubscriptionListQuery,
  WebhookSubscriptionParams,
  WebhookSubscriptionPatchBody,
} from './webhooks.schemas.js';
import * as webhooks from './webhooks.service.js';

const EXTENSION = 'Extension of the interface (docs/api.md, Webhooks). ';

export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, config, pager } = app.ctx;
  const policy = addressPolicy(config.webhookAllowPrivateNetworks);
  const secretBox = () => secretBoxFor(config);
  const ports = portRule(config.webhookAllowedPorts);
  const httpsOnly = httpsOnlyIn(config);

  app.post(
    '/webhook_subscriptions',
    {
      schema: {
        operationId: 'webhookSubscriptions.create',
        tags: ['Webhooks'],
        summary: 'Subscribe a URL to events; the response carries the signing secret, once',
        description:
          `At most WEBHOOK_SUBSCRIPTIONS_PER_TENANT (default 20) live subscriptions per tenant: 422 webhook_subscription_limit. ` +
          '`idempotencyKey` (an extension) works as on POST /v0/person_logs.',
        body: WebhookSubscriptionCreateBody,
        response: { 201: WebhookSubscriptionCreated, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const created = await webhooks.createSubscription(
        request.scope,
        clock,
        { secretBox: secretBox(), policy, ports, httpsOnly, maxSubscriptions: config.webhookSubscriptionsPerTenant },
        request.body,
      );
      return sendIdempotent(reply, created);
    },
  );

  app.get(
    '/webhook_subscriptions',
    {
      schema: {
        operationId: 'webhookSubscriptions.list',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'List the webhook subscriptions, newest first (never their secrets)',
        description: EXTENSION,
        querystring: WebhookSubscriptionListQuery,
        response: { 200: WebhookSubscriptionList, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: 'webhookSubscriptions.list',
        fetch: (window) => webhooks.listSubscriptions(request.scope, window),
        keyOf: (s) => [s.subscriptionId],
      }),
  );

  app.get(
    '/webhook_subscriptions/:webhook_subscription_id',
    {
      schema: {
        operationId: 'webhookSubscriptions.get',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'Get a webhook subscription (never its secret)',
        description: EXTENSION,
        params: WebhookSubscriptionParams,
        response: { 200: Type.Ref('WebhookSubscription'), ...standardErrorResponses },
      },
    },
    async (request) => webhooks.getSubscription(request.scope, request.params.webhook_subscription_id),
  );

  app.patch(
    '/webhook_subscriptions/:webhook_subscription_id',
    {
      schema: {
        operationId: 'webhookSubscriptions.patch',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'Change the URL, the events, or switch a subscription off or on',
        description:
          EXTENSION +
          'The URL rules of creation apply. active: false closes the pending deliveries as failed; ' +
          'active: true starts receiving new events again.',
        params: WebhookSubscriptionParams,
        body: WebhookSubscriptionPatchBody,
        response: { 200: Type.Ref('WebhookSubscription'), ...standardErrorResponses },
      },
    },
    async (request) =>
      webhooks.patchSubscription(
        request.scope,
        clock,
        { policy, ports, httpsOnly },
        request.params.webhook_subscription_id,
        request.body,
      ),
  );

  app.delete(
    '/webhook_subscriptions/:webhook_subscription_id',
    {
      schema: {
        operationId: 'webhookSubscriptions.delete',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'Delete a subscription: nothing more is sent to it',
        description: EXTENSION + 'Answers 204; its pending deliveries are closed; a 404 everywhere afterwards.',
        params: WebhookSubscriptionParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await webhooks.deleteSubscription(request.scope, clock, request.params.webhook_subscription_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhook_subscriptions/:webhook_subscription_id/rotate_secret',
    {
      schema: {
        operationId: 'webhookSubscriptions.rotateSecret',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'Issue a new signing secret (shown once); the previous one keeps signing for a grace period',
        description:
          EXTENSION +
          'Body `{}`, or `{ gracePeriodHours, idempotencyKey }`. During the grace period (default 24 h) every ' +
          'delivery carries two signatures in webhook-signature, one per secret.',
        params: WebhookSubscriptionParams,
        body: WebhookSecretRotateBody,
        response: { 200: WebhookSubscriptionCreated, ...standardErrorResponses },
      },
    },
    async (request, reply) =>
      sendIdempotent(
        reply,
        await webhooks.rotateSecret(
          request.scope,
          clock,
          secretBox(),
          request.params.webhook_subscription_id,
          request.body,
        ),
      ),
  );

  app.get(
    '/webhook_subscriptions/:webhook_subscription_id/deliveries',
    {
      schema: {
        operationId: 'webhookSubscriptions.deliveries',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'List the deliveries of a subscription, newest first',
        description: EXTENSION + '`totalCount` is null: a delivery history is not counted.',
        params: WebhookSubscriptionParams,
        querystring: WebhookDeliveryListQuery,
        response: { 200: WebhookDeliveryList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const id = request.params.webhook_subscription_id;
      const { status } = request.query;
      return pager.list(request.scope.tenantId, request.query, {
        context: `webhookSubscriptions.deliveries:${id}:${status ?? ''}`,
        fetch: (window) => webhooks.listDeliveries(request.scope, id, status, window),
        keyOf: (d) => [d.deliveryId],
      });
    },
  );

  app.post(
    '/webhook_deliveries/:webhook_delivery_id/replay',
    {
      schema: {
        operationId: 'webhookDeliveries.replay',
        tags: [WEBHOOKS_EXTENSION_TAG],
        summary: 'Send a closed delivery again (same event, same webhook-id)',
        description:
          EXTENSION +
          'Body `{}` or `{ idempotencyKey }`. Answers 202 with the delivery, pending again with its attempt count ' +
          'back to 0. 409 webhook_delivery_pending while it is pending; 409 webhook_subscription_inactive when ' +
          'its subscription is inactive.',
        params: WebhookDeliveryParams,
        body: WebhookDeliveryReplayBody,
        response: { 202: Type.Ref('WebhookDelivery'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) =>
      sendIdempotent(
        reply,
        await webhooks.replayDelivery(request.scope, clock, request.params.webhook_delivery_id, request.body),
      ),
  );
};
