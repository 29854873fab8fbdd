import type { LightMyRequestResponse } from 'fastify';
import type { Tenant, TestApp } from '../harness.js';
import { makeAudience } from './audiences.js';
import { makePage } from './pages.js';

/** Registers a domain and a link on it (or on no domain) through the API; returns their ids. */
export async function linkOnHost(
  t: TestApp,
  tenant: Tenant,
  options: { hostname?: string; tenantDomainId?: string | null; path: string; audienceId: string },
): Promise<{ tenantDomainId: string | null; pageLinkId: string }> {
  let tenantDomainId = options.tenantDomainId ?? null;
  if (options.hostname !== undefined) {
    const domain = await t.request(tenant, {
      method: 'POST',
      url: '/v0/tenant_domains',
      payload: { hostname: options.hostname },
    });
    if (domain.statusCode !== 201) throw new Error(`domain: ${domain.body}`);
    tenantDomainId = domain.json().tenantDomainId;
  }
  const link = await t.request(tenant, {
    method: 'POST',
    url: '/v0/page_links',
    payload: { path: options.path, tenantDomainId, target: { targetType: 'audience', audienceId: options.audienceId } },
  });
  if (link.statusCode !== 201) throw new Error(`link: ${link.body}`);
  return { tenantDomainId, pageLinkId: link.json().pageLinkId };
}

/** A visitor's request to a page host. */
export function visit(
  t: TestApp,
  host: string,
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE' = 'GET',
): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url: path, headers: { host, ...headers } });
}

/** The on-page agent's stored messages, questions and answers, of every tenant. */
export async function agentMessageCount(t: TestApp): Promise<number> {
  const row = await t.database.kysely
    .selectFrom('agent_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A published page whose one action is a form, linked at `/offers` on `host`: the form's hidden
 * fields (`ap_audience`, `ap_action`) and the page's view token, as a visitor's browser reads them.
 */
export async function formPageOn(
  t: TestApp,
  tenant: Tenant,
  host: string,
): Promise<{ hidden: Record<'ap_audience' | 'ap_action', string>; view: string }> {
  const pageId = await makePage(tenant.scope, t.clock, {
    title: 'Offers',
    actions: [{ purpose: 'Talk to us', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
  });
  const { audienceId } = await makeAudience(tenant.scope, t.clock, {
    pageId,
    computedName: 'All',
    personRouteKey: null,
  });
  await linkOnHost(t, tenant, { hostname: host, path: '/offers', audienceId });
  const html = (await visit(t, host, '/offers')).body;
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  return {
    hidden: { ap_audience: field('ap_audience'), ap_action: field('ap_action') },
    view: /<meta name="ap-view" content="([^"]+)"/.exec(html)?.[1] ?? '',
  };
}
