import type { Insertable, Updateable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import type { PageLinksTable, TenantDomainsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

const LINK_COLUMNS = [
  'page_links.id',
  'page_links.tenant_domain_id',
  'page_links.path',
  'page_links.target_type',
  'page_links.audience_id',
  'page_links.created_at',
  'page_links.updated_at',
  'page_links.deleted_at',
] as const;

export type PageLinkRow = Awaited<ReturnType<typeof findPageLink>> & {};

export async function findPageLink(scope: TenantScope, id: string, options: { lock?: boolean } = {}) {
  const query = scope
    .selectFrom('page_links')
    .select(LINK_COLUMNS)
    .where('page_links.id', '=', id)
    .where('page_links.deleted_at', 'is', null);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

/** The live link at a path of a domain (`domainKey` = tenant domain id, or '' for none). */
export async function findLinkAtPath(scope: TenantScope, domainKey: string, path: string) {
  return scope
    .selectFrom('page_links')
    .select('page_links.id')
    .where('page_links.domain_key', '=', domainKey)
    .where('page_links.path', '=', path)
    .where('page_links.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function updatePageLink(scope: TenantScope, id: string, changes: Updateable<PageLinksTable>) {
  await scope.updateTable('page_links').set(changes).where('page_links.id', '=', id).execute();
}

export async function insertPageLink(scope: TenantScope, row: Omit<Insertable<PageLinksTable>, 'tenant_id'>) {
  await scope.insertInto('page_links', row).execute();
}

export async function findTenantDomain(scope: TenantScope, id: string) {
  return scope
    .selectFrom('tenant_domains')
    .select(['tenant_domains.id', 'tenant_domains.hostname'])
    .where('tenant_domains.id', '=', id)
    .executeTakeFirst();
}

export async function insertTenantDomain(scope: TenantScope, row: Omit<Insertable<TenantDomainsTable>, 'tenant_id'>) {
  await scope.insertInto('tenant_domains', row).execute();
}

export async function findAudienceForLink(scope: TenantScope, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .select(['audiences.id', 'audiences.archived_at'])
    .where('audiences.id', '=', audienceId)
    .executeTakeFirst();
}
