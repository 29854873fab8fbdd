import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/** One more change to what the tenant's hosts serve, in the caller's transaction. */
export async function bumpRevision(scope: TenantScope): Promise<void> {
  await scope
    .insertInto('serving_revisions', { revision: 1 })
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet((eb) => ({ revision: eb(eb.ref('serving_revisions.revision'), '+', 1) })),
    )
    .execute();
}

/**
 * A value that moves whenever any tenant's counter moves (every bump adds one to the sum): one
 * cheap aggregate, so a process only reads the counters when something changed.
 */
export async function revisionsStamp(db: Kysely<DB>): Promise<string> {
  const row = await db
    .selectFrom('serving_revisions')
    .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('revision').as('revisions')])
    .executeTakeFirstOrThrow();
  return `${Number(row.rows)}:${Number(row.revisions ?? 0)}`;
}

/** Every tenant's counter (read only when the stamp moved). */
export async function allRevisions(db: Kysely<DB>) {
  return db.selectFrom('serving_revisions').select(['tenant_id', 'revision']).execute();
}
