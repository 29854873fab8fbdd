import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/**
 * The console's users, sign-in links and sessions. A link or a session is found by the hash of
 * its secret before its tenant is known (as an API key is): those two look-ups take the raw
 * database; everything else goes through the tenant's scope.
 */

export async function tenantExists(db: Kysely<DB>, tenantId: string): Promise<boolean> {
  return (await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst()) !== undefined;
}

export async function findUserByEmail(scope: TenantScope, email: string) {
  return scope.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function insertUser(
  scope: TenantScope,
  row: { id: string; email: string; invited_by: string | null; created_at: string },
) {
  await scope.insertInto('console_users', { ...row, last_sign_in_at: null }).execute();
}

export async function listUsers(scope: TenantScope, limit: number) {
  return scope
    .selectFrom('console_users')
    .select(['id', 'email', 'created_at', 'last_sign_in_at', 'invited_by'])
    .orderBy('email')
    .limit(limit)
    .execute();
}

export async function insertSignInLink(
  scope: TenantScope,
  row: { token_hash: string; user_id: string; created_at: string; expires_at: string },
) {
  await scope.insertInto('console_sign_in_links', { ...row, used_at: null }).execute();
}

/** A link by the hash of its token, of any tenant (the token is the credential). */
export async function findSignInLink(db: Kysely<DB>, tokenHash: string) {
  return db
    .selectFrom('console_sign_in_links')
    .select(['tenant_id', 'user_id', 'expires_at', 'used_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Marks the link used if it still may be: true for exactly one caller, before it expires. */
export async function useSignInLink(scope: TenantScope, tokenHash: string, at: string): Promise<boolean> {
  const result = await scope
    .updateTable('console_sign_in_links')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markSignedIn(scope: TenantScope, userId: string, at: string) {
  await scope.updateTable('console_users').set({ last_sign_in_at: at }).where('id', '=', userId).execute();
}

export async function insertSession(
  scope: TenantScope,
  row: { token_hash: string; user_id: string; csrf_token: string; created_at: string },
) {
  await scope.insertInto('console_sessions', { ...row, last_seen_at: row.created_at, ended_at: null }).execute();
}

/** A live session by the hash of its cookie's token, with its user, of any tenant. */
export async function findSession(db: Kysely<DB>, tokenHash: string) {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.id', 's.user_id')
    .select(['s.tenant_id', 's.user_id', 's.csrf_token', 's.created_at', 's.last_seen_at', 'u.email'])
    .where('s.token_hash', '=', tokenHash)
    .where('s.ended_at', 'is', null)
    .executeTakeFirst();
}

export async function touchSession(scope: TenantScope, tokenHash: string, at: string) {
  await scope
    .updateTable('console_sessions')
    .set({ last_seen_at: at })
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .execute();
}

export async function endSession(scope: TenantScope, tokenHash: string, at: string) {
  await scope
    .updateTable('console_sessions')
    .set({ ended_at: at })
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .execute();
}

/**
 * The live links of a page's audiences, with their domain's host name (null: a link on every
 * domain of the tenant), oldest first: the audience screen shows the full URLs (read only).
 */
export async function linksOfPage(scope: TenantScope, pageId: string, limit: number) {
  return scope
    .selectFrom('page_links')
    .innerJoin('audiences', (join) =>
      join
        .onRef('audiences.id', '=', 'page_links.audience_id')
        .onRef('audiences.tenant_id', '=', 'page_links.tenant_id'),
    )
    .leftJoin('tenant_domains', (join) =>
      join
        .onRef('tenant_domains.id', '=', 'page_links.tenant_domain_id')
        .onRef('tenant_domains.tenant_id', '=', 'page_links.tenant_id')
        .on('tenant_domains.deleted_at', 'is', null),
    )
    .select(['page_links.id', 'page_links.path', 'page_links.audience_id', 'tenant_domains.hostname'])
    .where('audiences.page_id', '=', pageId)
    .where('page_links.deleted_at', 'is', null)
    .orderBy('page_links.created_at')
    .orderBy('page_links.id')
    .limit(limit)
    .execute();
}
