import type { FastifyPluginAsync } from 'fastify';
import { AppError, notFound } from '../../http/errors.js';
import { domainVerifier, listTenantDomains } from '../tenant-domains/index.js';
import { createApiKey, listApiKeys, revokeTenantApiKey } from '../tenants/index.js';
import { getSubscription, listDeliveries, listSubscriptions, replayDelivery } from '../webhooks/index.js';
import type { ConsoleUser } from './console.auth.service.js';
import { formText, queryText, sendHtml, userOf } from './console.http.js';
import {
  renderDeliveries,
  renderSettings,
  type DeliveryView,
  type Notice,
  type SubscriptionView,
} from './console.settings.views.js';

/** Domains, subscriptions shown on the settings screen (a tenant has few of either). */
const LISTED = 100;
/** Deliveries on one screen. */
const DELIVERIES_SHOWN = 50;
/** What ids in a settings path may look like (anything else is simply not found). */
const ID = /^[a-z]+_[a-z0-9]{26}$/i;

/**
 * Settings (docs/console.md): domains and their DNS proof (verify → the tenant-domains service),
 * webhook subscriptions and their deliveries (replay → the webhooks service), API keys (create,
 * shown once; revoke → the tenants service). Every change is a POST form with the anti-CSRF field
 * (checked by the signed-in area's hook).
 */
export const consoleSettingsRoutes: FastifyPluginAsync = async (app) => {
  const { clock, pager, database } = app.ctx;
  const verifyNow = domainVerifier(app.ctx);

  async function settingsScreen(
    user: ConsoleUser,
    extra: { notice?: Notice; createdKey?: { apiKey: string; name: string | null } } = {},
  ) {
    const [domains, subscriptions, apiKeys] = await Promise.all([
      listTenantDomains(user.scope, { limit: LISTED, after: null }),
      listSubscriptions(user.scope, { limit: LISTED, after: null }),
      listApiKeys(database.kysely, user.tenantId),
    ]);
    return renderSettings({
      viewer: user,
      domains: domains.items.slice(0, LISTED),
      subscriptions: subscriptions.items.slice(0, LISTED) as SubscriptionView[],
      apiKeys,
      ...extra,
    });
  }

  function checkedId(id: string, what: string): string {
    if (!ID.test(id)) throw notFound(what, id);
    return id;
  }

  app.get('/settings', { schema: { hide: true } }, async (request, reply) =>
    sendHtml(reply, await settingsScreen(userOf(request))),
  );

  app.post<{ Params: { id: string } }>(
    '/settings/domains/:id/verify',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      try {
        const domain = await verifyNow(user.scope, checkedId(request.params.id, 'domain'), request.log);
        const notice = { text: `${domain.hostname} is verified: it serves the tenant’s pages.` };
        return sendHtml(reply, await settingsScreen(user, { notice }));
      } catch (error) {
        // Not proven (yet), or another tenant proved it first: said on the screen, the check recorded.
        if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409)) throw error;
        const notice = { text: error.detail, error: true };
        return sendHtml(reply, await settingsScreen(user, { notice }), error.status);
      }
    },
  );

  app.post('/settings/api-keys', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const name = formText(request, 'name', 100).trim() || null;
    const key = await createApiKey(database.kysely, clock, { tenantId: user.tenantId, name });
    return sendHtml(reply, await settingsScreen(user, { createdKey: { apiKey: key.apiKey, name: key.name } }));
  });

  app.post<{ Params: { id: string } }>(
    '/settings/api-keys/:id/revoke',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      await revokeTenantApiKey(database.kysely, clock, user.tenantId, checkedId(request.params.id, 'API key'));
      return sendHtml(reply, await settingsScreen(user, { notice: { text: 'The key is revoked.' } }));
    },
  );

  async function deliveriesScreen(user: ConsoleUser, subscriptionId: string, cursor?: string, notice?: Notice) {
    const subscription = (await getSubscription(user.scope, subscriptionId)) as SubscriptionView;
    const envelope = await pager.list(
      user.tenantId,
      { cursor, limit: DELIVERIES_SHOWN },
      {
        context: `webhookDeliveries.list:${subscriptionId}:`,
        fetch: (window) => listDeliveries(user.scope, subscriptionId, undefined, window),
        keyOf: (d) => [d.deliveryId],
      },
    );
    return renderDeliveries({
      viewer: user,
      subscription,
      deliveries: envelope.items as DeliveryView[],
      nextHref:
        envelope.nextCursor === null
          ? null
          : `/console/settings/webhooks/${subscriptionId}?cursor=${encodeURIComponent(envelope.nextCursor)}`,
      notice,
    });
  }

  app.get<{ Params: { id: string } }>('/settings/webhooks/:id', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const cursor = queryText(request, 'cursor', 1000) || undefined;
    return sendHtml(reply, await deliveriesScreen(user, checkedId(request.params.id, 'subscription'), cursor));
  });

  app.post<{ Params: { id: string } }>(
    '/settings/webhooks/deliveries/:id/replay',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const id = checkedId(request.params.id, 'delivery');
      // A pending delivery or an inactive subscription: 409, in the service's words (the error page).
      const { body } = await replayDelivery(user.scope, clock, id, {});
      const notice = { text: 'The delivery starts over: it is sent again in a moment.' };
      return sendHtml(reply, await deliveriesScreen(user, body.subscriptionId, undefined, notice));
    },
  );
};
