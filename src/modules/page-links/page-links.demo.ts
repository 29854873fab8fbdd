import type { DemoContext } from '../module.js';
import { audiencesForDemo } from './page-links.queries.js';
import { createPageLink } from './page-links.service.js';

const SLUGS: Record<string, string> = {
  inbound: 'pricing',
  outbound: 'enterprise',
  call_followup: 'recap',
  sales_deck: 'platform',
  custom: 'partner',
};

/**
 * Links for the live demo audiences, and their full URLs to open after `npm start`: per page, a
 * link `/<slug>` on the local domain (`*.localhost`) serving its first audience, from which each
 * other audience of the page is reached at `/<slug>/<personRouteKey>`; the same pages on the
 * production-like domain, and one link on no domain (served on every domain of the tenant).
 */
export async function pageLinksDemo(ctx: DemoContext) {
  const audienceIds = (ctx.created.audiences?.audienceIds as string[] | undefined) ?? [];
  const domains = ctx.created.tenantDomains as
    { tenantDomainIds?: string[]; localDomain?: { tenantDomainId: string; hostname: string } } | undefined;
  const local = domains?.localDomain;
  const production = domains?.tenantDomainIds?.[1] ?? null;
  // Links serve live audiences: archived ones are left without a link.
  const audiences = (await audiencesForDemo(ctx.scope, audienceIds)).filter((a) => a.archived_at === null);
  const byPage = new Map<string, typeof audiences>();
  for (const a of audiences) byPage.set(a.page_id, [...(byPage.get(a.page_id) ?? []), a]);

  const pageLinkIds: string[] = [];
  const pageUrls: string[] = [];
  const origin = local ? `http://${local.hostname}${ctx.config.port === 80 ? '' : `:${ctx.config.port}`}` : null;
  for (const [i, members] of [...byPage.values()].entries()) {
    const first = members[0]!;
    const slug = SLUGS[first.page_type] ?? `page-${i + 1}`;
    const target = { targetType: 'audience' as const, audienceId: first.id };
    if (local) {
      const link = await createPageLink(ctx.scope, ctx.clock, {
        path: `/${slug}`,
        tenantDomainId: local.tenantDomainId,
        target,
      });
      pageLinkIds.push(link.pageLinkId);
      pageUrls.push(`${origin}${link.path}`);
      for (const other of members.slice(1)) {
        if (other.person_route_key !== null) pageUrls.push(`${origin}${link.path}/${other.person_route_key}`);
      }
    }
    if (production !== null) {
      const link = await createPageLink(ctx.scope, ctx.clock, { path: `/${slug}`, tenantDomainId: production, target });
      pageLinkIds.push(link.pageLinkId);
    }
  }
  const anyDomain = audiences.at(-1);
  if (anyDomain !== undefined) {
    const link = await createPageLink(ctx.scope, ctx.clock, {
      path: '/welcome',
      tenantDomainId: null,
      target: { targetType: 'audience', audienceId: anyDomain.id },
    });
    pageLinkIds.push(link.pageLinkId);
    if (origin !== null) pageUrls.push(`${origin}${link.path}`);
  }
  return { pageLinkIds, pageUrls };
}
