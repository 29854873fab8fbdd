import type { Insertable, Kysely } from 'kysely';
import { keysetAfter } from '../../db/keyset.js';
import type { DB, TenantDomainsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const COLUMNS = ['tenant_domains.id', 'tenant_domains.hostname', 'tenant_domains.created_at'] as const;
const NEWEST_FIRST = [{ ref: 'tenant_domains.id', direction: 'desc' as const }];

export type TenantDomainRow = Awaited<ReturnType<typeof findTenantDomain>> & {};

/** A live domain of the tenant. */
export async function findTenantDomain(scope: TenantScope, id: string) {
  return scope
    .selectFrom('tenant_domains')
    .select(COLUMNS)
    .where('tenant_domains.id', '=', id)
    .where('tenant_domains.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listTenantDomains(scope: TenantScope, window: KeysetWindow) {
  let query = scope.selectFrom('tenant_domains').select(COLUMNS).where('tenant_domains.deleted_at', 'is', null);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('tenant_domains.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countTenantDomains(scope: TenantScope): Promise<number> {
  const row = await scope
    .selectFrom('tenant_domains')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_domains.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertTenantDomain(scope: TenantScope, row: Omit<Insertable<TenantDomainsTable>, 'tenant_id'>) {
  await scope.insertInto('tenant_domains', row).execute();
}

/** Marks the domain removed; false when it was not live. */
export async function markTenantDomainDeleted(scope: TenantScope, id: string, now: string): Promise<boolean> {
  const result = await scope
    .updateTable('tenant_domains')
    .set({ deleted_at: now })
    .where('tenant_domains.id', '=', id)
    .where('tenant_domains.deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes the live links of a domain (with the domain: they cannot serve without it). */
export async function deleteLinksOfDomain(scope: TenantScope, domainId: string, now: string) {
  await scope
    .updateTable('page_links')
    .set({ deleted_at: now, updated_at: now })
    .where('page_links.tenant_domain_id', '=', domainId)
    .where('page_links.deleted_at', 'is', null)
    .execute();
}

/**
 * Every live host name of every tenant, and a stamp that changes whenever one is added or removed
 * (rows are never deleted, only marked). Operator code: the page router serves every tenant.
 */
export async function domainsStamp(db: Kysely<DB>): Promise<string> {
  const row = await db
    .selectFrom('tenant_domains')
    .select((eb) => [eb.fn.countAll<number>().as('all'), eb.fn.count<number>('deleted_at').as('deleted')])
    .executeTakeFirstOrThrow();
  return `${Number(row.all)}:${Number(row.deleted)}`;
}

export async function liveHostnames(db: Kysely<DB>) {
  return db.selectFrom('tenant_domains').select(['hostname', 'tenant_id']).where('deleted_at', 'is', null).execute();
}
