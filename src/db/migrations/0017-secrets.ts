import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import type { MigrationContext } from './column-types.js';

/**
 * Binds every sealed webhook signing secret to its subscription (issue 10, item 14): `v1` values,
 * sealed without associated data, are opened and sealed again as `v2` with the subscription id as
 * associated data. Only the service holds the key, so the caller hands in the re-sealing function;
 * a database with `v1` values and no key refuses to migrate rather than leave secrets unreadable.
 */
export async function up(db: Kysely<any>, _engine: Engine, context: MigrationContext): Promise<void> {
  const rows: { id: string; secret: string; previous_secret: string | null }[] = await db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'secret', 'previous_secret'])
    .where((eb) => eb.or([eb('secret', 'like', 'v1.%'), eb('previous_secret', 'like', 'v1.%')]))
    .execute();
  if (rows.length === 0) return;
  const reseal = context.resealWebhookSecret;
  if (reseal === undefined) {
    throw new Error(
      `${rows.length} webhook secrets must be re-sealed with the secret key: run the migration through ` +
        '`audience-pages migrate` or the server, with the SECRET_KEY (or generated key file) that sealed them',
    );
  }
  const again = (sealed: string | null, id: string) =>
    sealed === null || !sealed.startsWith('v1.') ? sealed : reseal(sealed, id);
  for (const row of rows) {
    await db
      .updateTable('webhook_subscriptions')
      .set({ secret: again(row.secret, row.id), previous_secret: again(row.previous_secret, row.id) })
      .where('id', '=', row.id)
      .execute();
  }
}
