import { hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { DB } from './schema.js';

/** The HMAC keys the service keeps for itself, each for one purpose. */
export type ServiceSecretName = 'cursor-signing' | 'file-signing' | 'session-tokens' | 'page-runtime';

/**
 * The key for one purpose (signing pagination cursors, file URLs, page sessions, …).
 *
 * With SECRET_KEY set it is derived from the first key with HKDF-SHA256 (the purpose as `info`),
 * so nothing secret is stored in the database and a database backup alone cannot forge a cursor or
 * a file URL; any row a development run left in `service_secrets` is deleted. Without a key
 * (development: production refuses to start) it is a random value created on first use in
 * `service_secrets`, shared by every process on the same database.
 */
export async function loadServiceSecret(
  db: Kysely<DB>,
  name: ServiceSecretName,
  clock: Clock,
  secretKeys: readonly Buffer[],
): Promise<string> {
  const root = secretKeys[0];
  if (root !== undefined) {
    await db.deleteFrom('service_secrets').where('name', '=', name).execute();
    return deriveServiceSecret(root, name);
  }
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(32).toString('base64url'), created_at: clock.now().toISOString() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

export function deriveServiceSecret(root: Buffer, name: ServiceSecretName): string {
  return Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `audience-pages/${name}`, 32)).toString('base64url');
}
