import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { addressPolicy, portRule } from '../../net/address-policy.js';
import { secretBoxFor } from '../../outbox/secret-box.js';
import { WebhookSubscriptionCreateBody, WebhookSubscriptionCreated } from './webhooks.schemas.js';
import * as webhooks from './webhooks.service.js';

export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, config } = app.ctx;
  const policy = addressPolicy(config.webhookAllowPrivateNetworks);
  const ports = portRule(config.webhookAllowedPorts);

  app.post(
    '/webhook_subscriptions',
    {
      schema: {
        operationId: 'webhookSubscriptions.create',
        tags: ['Webhooks'],
        summary: 'Subscribe a URL to events; the response carries the signing secret, once',
        body: WebhookSubscriptionCreateBody,
        response: { 201: WebhookSubscriptionCreated, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const created = await webhooks.createSubscription(
        request.scope,
        clock,
        { secretBox: secretBoxFor(config), policy, ports },
        request.body,
      );
      return reply.code(201).send(created);
    },
  );
};
