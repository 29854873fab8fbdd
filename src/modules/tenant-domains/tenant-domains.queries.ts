import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { DB, TenantDomainsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const COLUMNS = [
  'tenant_domains.id',
  'tenant_domains.hostname',
  'tenant_domains.status',
  'tenant_domains.verification_token',
  'tenant_domains.verified_at',
  'tenant_domains.checked_at',
  'tenant_domains.check_result',
  'tenant_domains.check_detail',
  'tenant_domains.proof_missing_since',
  'tenant_domains.pending_until',
  'tenant_domains.next_check_at',
  'tenant_domains.check_attempts',
  'tenant_domains.created_at',
] as const;
const NEWEST_FIRST = [{ ref: 'tenant_domains.id', direction: 'desc' as const }];

export type TenantDomainRow = Awaited<ReturnType<typeof findTenantDomain>> & {};

/** A live domain of the tenant (any status); `lock` holds its row until the transaction ends. */
export async function findTenantDomain(scope: TenantScope, id: string, options: { lock?: boolean } = {}) {
  const query = scope
    .selectFrom('tenant_domains')
    .select(COLUMNS)
    .where('tenant_domains.id', '=', id)
    .where('tenant_domains.deleted_at', 'is', null);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
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

/**
 * Writes a check's outcome (or any other change of state). `servingChanged` bumps the row's
 * revision, which tells every process's host map to reload (see `domainsStamp`).
 */
export async function updateTenantDomain(
  scope: TenantScope,
  id: string,
  changes: Updateable<TenantDomainsTable>,
  options: { servingChanged: boolean },
) {
  await scope
    .updateTable('tenant_domains')
    .set(options.servingChanged ? { ...changes, revision: sql<number>`revision + 1` } : changes)
    .where('tenant_domains.id', '=', id)
    .execute();
}

/*
 * The check job's queue (tenant_domain_checks, migration 0031): a row per domain that mirrors the
 * domain's `next_check_at` for the leased-job runner.
 */

/**
 * Queues the domain's check at `at` (idle when null), unless its job is running right now: a
 * running job plans its next run itself when it finishes (planNextCheck).
 */
export async function queueCheck(scope: TenantScope, domainId: string, at: string | null) {
  const status = at === null ? ('idle' as const) : ('due' as const);
  await scope
    .insertInto('tenant_domain_checks', {
      tenant_domain_id: domainId,
      status,
      attempts: 0,
      lease_token: null,
      available_at: at,
    })
    .onConflict((oc) =>
      oc
        .column('tenant_domain_id')
        .doUpdateSet({ status, attempts: 0, available_at: at })
        .where('tenant_domain_checks.status', '<>', 'checking'),
    )
    .execute();
}

/** The running job's next run (its lease checked by the runner, its row locked). */
export async function planNextCheck(scope: TenantScope, domainId: string, at: string | null) {
  await scope
    .updateTable('tenant_domain_checks')
    .set({ status: at === null ? 'idle' : 'due', attempts: 0, lease_token: null, available_at: at })
    .where('tenant_domain_checks.tenant_domain_id', '=', domainId)
    .execute();
}

/** Marks the domain removed; false when it was not live. */
export async function markTenantDomainDeleted(scope: TenantScope, id: string, now: string): Promise<boolean> {
  const result = await scope
    .updateTable('tenant_domains')
    .set({ deleted_at: now, next_check_at: null, revision: sql<number>`revision + 1` })
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

/*
 * A host name is one for the whole service: the two statements below read and end *other tenants'*
 * claims on it, through the raw database. They never return another tenant's rows, only whether a
 * verified holder exists.
 */

/** Whether a tenant (other than `exceptTenantId`, when given) holds `hostname` verified. */
export async function hasVerifiedHolder(scope: TenantScope, hostname: string, exceptTenantId?: string) {
  let query = scope
    .unscopedDb()
    .selectFrom('tenant_domains')
    .select('id')
    .where('hostname', '=', hostname)
    .where('status', '=', sql.lit('verified'))
    .where('deleted_at', 'is', null);
  if (exceptTenantId !== undefined) query = query.where('tenant_id', '<>', exceptTenantId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Ends every other live, unverified claim on `hostname` (its winner's proof was just found). */
export async function supersedeOtherClaims(scope: TenantScope, hostname: string, winnerId: string) {
  await scope
    .unscopedDb()
    .updateTable('tenant_domains')
    .set({ status: 'superseded', next_check_at: null, check_lease_token: null })
    .where('hostname', '=', hostname)
    .where('deleted_at', 'is', null)
    .where('status', 'in', ['pending', 'expired'])
    .where('id', '<>', winnerId)
    .execute();
}

/**
 * A stamp that changes whenever a domain starts or stops serving anywhere: rows are never deleted,
 * and every such change bumps the row's revision. Operator code: the page router serves every tenant.
 */
export async function domainsStamp(db: Kysely<DB>): Promise<string> {
  const row = await db
    .selectFrom('tenant_domains')
    .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('revision').as('revisions')])
    .executeTakeFirstOrThrow();
  return `${Number(row.rows)}:${Number(row.revisions ?? 0)}`;
}

/** Every verified host name of every tenant: the names that serve pages. */
export async function verifiedHostnames(db: Kysely<DB>) {
  return db
    .selectFrom('tenant_domains')
    .select(['hostname', 'tenant_id'])
    .where('status', '=', sql.lit('verified'))
    .where('deleted_at', 'is', null)
    .execute();
}
