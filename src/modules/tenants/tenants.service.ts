import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { AppError, notFound } from '../../http/errors.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../../auth/api-keys.js';
import * as q from './tenants.queries.js';

export async function createTenant(db: Kysely<DB>, clock: Clock, input: { name: string }) {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 255)
    throw new AppError('validation_failed', 'A tenant name is 1..255 characters.');
  const tenant = { id: newId('tenant'), name, created_at: isoNow(clock) };
  await q.insertTenant(db, tenant);
  return { tenantId: tenant.id, name: tenant.name, createdAt: tenant.created_at };
}

/** Issues a key. The returned `apiKey` is the only copy that will ever exist outside a hash. */
export async function createApiKey(db: Kysely<DB>, clock: Clock, input: { tenantId: string; name?: string | null }) {
  if ((await q.findTenant(db, input.tenantId)) === undefined) throw notFound('tenant', input.tenantId);
  const apiKey = generateApiKey();
  const row = {
    id: newId('apiKey'),
    tenant_id: input.tenantId,
    name: input.name ?? null,
    key_hash: hashApiKey(apiKey),
    key_prefix: displayPrefix(apiKey),
    created_at: isoNow(clock),
    revoked_at: null,
  };
  await q.insertApiKey(db, row);
  return { keyId: row.id, tenantId: row.tenant_id, name: row.name, apiKey, createdAt: row.created_at };
}

export async function listApiKeys(db: Kysely<DB>, tenantId: string) {
  if ((await q.findTenant(db, tenantId)) === undefined) throw notFound('tenant', tenantId);
  const rows = await q.listApiKeys(db, tenantId);
  return rows.map((r) => ({
    keyId: r.id,
    name: r.name,
    prefix: r.key_prefix,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    active: r.revoked_at === null,
  }));
}

/** Revoking twice is not an error: the key is revoked either way. */
export async function revokeApiKey(db: Kysely<DB>, clock: Clock, keyId: string) {
  const key = await q.findApiKey(db, keyId);
  if (key === undefined) throw notFound('API key', keyId);
  if (key.revoked_at === null) await q.revokeApiKey(db, keyId, isoNow(clock));
  const after = await q.findApiKey(db, keyId);
  return { keyId, revokedAt: after!.revoked_at };
}

/** Revokes one of the tenant's keys (the console): another tenant's key, or an unknown one, is a 404. */
export async function revokeTenantApiKey(db: Kysely<DB>, clock: Clock, tenantId: string, keyId: string) {
  const key = await q.findApiKey(db, keyId);
  if (key === undefined || key.tenant_id !== tenantId) throw notFound('API key', keyId);
  return revokeApiKey(db, clock, keyId);
}
