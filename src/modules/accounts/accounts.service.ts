import type { TenantScope } from '../../db/tenant-scope.js';
import { conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { canonicalDomain } from '../../lib/domain-name.js';
import { newId } from '../../lib/ids.js';
import { latestActivityOfDomain } from '../account-activity/index.js';
import { linkedPersons } from '../persons/index.js';
import * as q from './accounts.queries.js';
import {
  ACCOUNT_LIMITS,
  type Account,
  type AccountCreateBody,
  type AccountPatchBody,
  type AccountSummary,
} from './accounts.schemas.js';

type ListedRow = Awaited<ReturnType<typeof q.listAccounts>>[number];

/** The fields every account shape carries. */
function accountFields(row: q.AccountRow) {
  return {
    accountId: row.id,
    domain: row.domain,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    latestActivityAt: row.latest_activity_at,
  };
}

function toSummary(row: ListedRow): AccountSummary {
  return { ...accountFields(row), linkedPersonsCount: Number(row.linked_persons_count) };
}

async function toAccount(scope: TenantScope, row: q.AccountRow): Promise<Account> {
  const [linked, count] = await Promise.all([
    linkedPersons(scope, row.domain, ACCOUNT_LIMITS.linkedPersons),
    q.countLinkedPersons(scope, row.domain),
  ]);
  return {
    ...accountFields(row),
    linkedPersons: linked,
    linkedPersonsCount: count,
  };
}

/**
 * Creates an account for a canonical domain (docs/api.md, endpoint 12). The domain is unique in
 * the tenant: a second account for the same company, in any spelling, is a 409
 * `account_exists` naming the existing `accountId`. Persons already on that domain are linked at
 * once, and their latest log entry is the account's `latestActivityAt`.
 */
export async function createAccount(scope: TenantScope, clock: Clock, body: AccountCreateBody): Promise<Account> {
  const canonical = canonicalDomain(body.domain);
  if (!canonical.ok) throw validationFailed('/body/domain', canonical.reason);
  const domain = canonical.domain;

  return scope.transaction(async (tx) => {
    const now = isoNow(clock);
    const row = {
      id: newId('account'),
      domain,
      name: body.name ?? null,
      created_at: now,
      updated_at: now,
      latest_activity_at: await latestActivityOfDomain(tx, domain),
    };
    if (!(await q.insertAccountIfNew(tx, row))) {
      const existing = await q.findAccountByDomain(tx, domain);
      throw conflict('account_exists', `An account for ${domain} already exists: ${existing?.id}.`, {
        accountId: existing?.id,
        domain,
      });
    }
    return toAccount(tx, row);
  });
}

/**
 * The tenant's account for a canonical `domain`, created when there is none (as createAccount
 * would, without the 409), and given `name` when it has none yet. For the enrichment of form
 * submissions: it never replaces what the tenant set. Must run inside a transaction.
 */
export async function ensureAccount(
  tx: TenantScope,
  clock: Clock,
  domain: string,
  name: string | null,
): Promise<{ account: Account; created: boolean; nameFilled: boolean }> {
  const now = isoNow(clock);
  const row = {
    id: newId('account'),
    domain,
    name,
    created_at: now,
    updated_at: now,
    latest_activity_at: await latestActivityOfDomain(tx, domain),
  };
  if (await q.insertAccountIfNew(tx, row))
    return { account: await toAccount(tx, row), created: true, nameFilled: false };
  const existing = (await q.findAccountByDomain(tx, domain))!;
  const nameFilled = name !== null && (await q.fillAccountName(tx, existing.id, name, now));
  const current = nameFilled ? (await q.findAccountByDomain(tx, domain))! : existing;
  return { account: await toAccount(tx, current), created: false, nameFilled };
}

export async function getAccount(scope: TenantScope, accountId: string): Promise<Account> {
  const row = await q.findAccount(scope, accountId);
  if (row === undefined) throw notFound('account', accountId);
  return toAccount(scope, row);
}

/**
 * Renames an account (docs/api.md, Accounts: changing one). Only `name` can change: the domain is
 * the account's identity (persons link by it), so a company that moved gets a new account. A
 * body that changes nothing leaves `updatedAt` alone.
 */
export async function patchAccount(
  scope: TenantScope,
  clock: Clock,
  accountId: string,
  body: AccountPatchBody,
): Promise<Account> {
  return scope.transaction(async (tx) => {
    const row = await q.findAccount(tx, accountId);
    if (row === undefined) throw notFound('account', accountId);
    if (body.name === undefined || body.name === row.name) return toAccount(tx, row);
    const now = isoNow(clock);
    await q.setAccountName(tx, accountId, body.name, now);
    return toAccount(tx, { ...row, name: body.name, updated_at: now });
  });
}

export async function listAccounts(
  scope: TenantScope,
  window: KeysetWindow,
  filter: { emptyOnly: boolean; text: string | null },
) {
  const [rows, totalCount] = await Promise.all([
    q.listAccounts(scope, window, filter.emptyOnly, filter.text),
    q.countAccounts(scope, filter.emptyOnly, filter.text),
  ]);
  return { items: rows.map(toSummary), totalCount };
}
