import type { Insertable, Kysely } from 'kysely';
import type { ApiKeysTable, DB } from '../../db/schema.js';

/** Tenants and keys are operator data: these queries take the raw database, not a TenantScope. */

export async function insertTenant(db: Kysely<DB>, row: { id: string; name: string; created_at: string }) {
  await db.insertInto('tenants').values(row).execute();
}

export async function findTenant(db: Kysely<DB>, id: string) {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertApiKey(db: Kysely<DB>, row: Insertable<ApiKeysTable>) {
  await db.insertInto('api_keys').values(row).execute();
}

export async function listApiKeys(db: Kysely<DB>, tenantId: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'key_prefix', 'created_at', 'revoked_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('id')
    .execute();
}

export async function revokeApiKey(db: Kysely<DB>, id: string, at: string) {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findApiKey(db: Kysely<DB>, id: string) {
  return db.selectFrom('api_keys').select(['id', 'tenant_id', 'revoked_at']).where('id', '=', id).executeTakeFirst();
}
