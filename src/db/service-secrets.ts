import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { DB } from './schema.js';

/**
 * A random secret the service keeps for itself (e.g. to sign pagination cursors), created on
 * first use and shared by every process on the same database.
 */
export async function loadServiceSecret(db: Kysely<DB>, name: string, clock: Clock): Promise<string> {
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(32).toString('base64url'), created_at: clock.now().toISOString() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
