import type { DemoContext } from '../module.js';
import { findAudienceForLink } from './page-links.queries.js';
import { createPageLink, createTenantDomain } from './page-links.service.js';

/** Two tenant domains and a link per live demo audience (some on a domain, some on every domain). */
export async function pageLinksDemo(ctx: DemoContext) {
  const created = (ctx.created.audiences?.audienceIds as string[] | undefined) ?? [];
  // Links serve live audiences: archived ones are left without a link.
  const audienceIds: string[] = [];
  for (const id of created) if ((await findAudienceForLink(ctx.scope, id))?.archived_at === null) audienceIds.push(id);
  const suffix = ctx.scope.tenantId.slice(-8);
  const domains = [
    await createTenantDomain(ctx.scope, ctx.clock, `go-${suffix}.northwind.example`),
    await createTenantDomain(ctx.scope, ctx.clock, `meet-${suffix}.northwind.example`),
  ];
  const pageLinkIds: string[] = [];
  for (const [i, audienceId] of audienceIds.entries()) {
    pageLinkIds.push(
      await createPageLink(ctx.scope, ctx.clock, {
        tenantDomainId: i % 3 === 2 ? null : domains[i % 2]!,
        path: `/for/${i % 2 === 0 ? 'account' : 'team'}-${i + 1}`,
        audienceId,
      }),
    );
  }
  return { tenantDomainIds: domains, pageLinkIds };
}
