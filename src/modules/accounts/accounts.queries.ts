import { sql, type ExpressionBuilder, type Insertable } from 'kysely';
import { substringMatch } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { AccountsTable, DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const ACCOUNT_COLUMNS = [
  'accounts.id',
  'accounts.domain',
  'accounts.name',
  'accounts.created_at',
  'accounts.updated_at',
  'accounts.latest_activity_at',
] as const;

const NEWEST_FIRST = [{ ref: 'accounts.id', direction: 'desc' as const }];

export type AccountRow = Awaited<ReturnType<typeof findAccount>> & {};

/** The persons of the same tenant linked to the account by domain (index persons_account). */
function linked(eb: ExpressionBuilder<DB, 'accounts'>) {
  return eb
    .selectFrom('persons')
    .whereRef('persons.tenant_id', '=', 'accounts.tenant_id')
    .whereRef('persons.account_domain', '=', 'accounts.domain');
}

function withCount(eb: ExpressionBuilder<DB, 'accounts'>) {
  return linked(eb)
    .select((e) => e.fn.countAll<number>().as('n'))
    .as('linked_persons_count');
}

function filtered(scope: TenantScope, emptyOnly: boolean, text: string | null) {
  let query = text === null ? scope.selectFrom('accounts') : scope.searchFrom('accounts', text);
  if (emptyOnly) query = query.where((eb) => eb.not(eb.exists(linked(eb).select(sql.lit(1).as('one')))));
  if (text !== null) query = query.where(substringMatch(scope.engine, 'accounts', ['domain', 'name'], text));
  return query;
}

export async function listAccounts(scope: TenantScope, window: KeysetWindow, emptyOnly: boolean, text: string | null) {
  let query = filtered(scope, emptyOnly, text).select([...ACCOUNT_COLUMNS, withCount]);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('accounts.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countAccounts(scope: TenantScope, emptyOnly: boolean, text: string | null): Promise<number> {
  const row = await filtered(scope, emptyOnly, text)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findAccount(scope: TenantScope, accountId: string) {
  return scope.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('accounts.id', '=', accountId).executeTakeFirst();
}

export async function findAccountByDomain(scope: TenantScope, domain: string) {
  return scope.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('accounts.domain', '=', domain).executeTakeFirst();
}

export async function countLinkedPersons(scope: TenantScope, domain: string): Promise<number> {
  const row = await scope
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('persons.account_domain', '=', domain)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Inserts unless the tenant already has an account with this domain; returns whether it did. */
export async function insertAccountIfNew(scope: TenantScope, row: Omit<Insertable<AccountsTable>, 'tenant_id'>) {
  const inserted = await scope
    .insertInto('accounts', row)
    .onConflict((oc) => oc.doNothing())
    .returning('accounts.id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function insertAccounts(scope: TenantScope, rows: Omit<Insertable<AccountsTable>, 'tenant_id'>[]) {
  await scope.insertInto('accounts', rows).execute();
}

/** Sets the account's name only while it has none (a name the tenant gave is never replaced). */
export async function fillAccountName(scope: TenantScope, accountId: string, name: string, nowIso: string) {
  const result = await scope
    .updateTable('accounts')
    .set({ name, updated_at: nowIso })
    .where('accounts.id', '=', accountId)
    .where('accounts.name', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Sets the account's name; returns whether the account exists. */
export async function setAccountName(scope: TenantScope, accountId: string, name: string | null, now: string) {
  const result = await scope
    .updateTable('accounts')
    .set({ name, updated_at: now })
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
