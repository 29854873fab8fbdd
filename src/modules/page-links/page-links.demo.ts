import type { DemoContext } from '../module.js';
import { createPageLink, createTenantDomain } from './page-links.service.js';

/** Two tenant domains and a link per demo audience (some on a domain, some on every domain). */
export async function pageLinksDemo(ctx: DemoContext) {
  const audienceIds = (ctx.created.audiences?.audienceIds as string[] | undefined) ?? [];
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
