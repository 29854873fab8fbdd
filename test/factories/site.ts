import type { LightMyRequestResponse } from 'fastify';
import type { Tenant, TestApp } from '../harness.js';

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
