import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The queue of tenant-domain checks (issue 26) on the leased-job runner: one row per domain, its
 * own queue entry (`available_at`: when the next check is due while `due`, the lease's end while
 * `checking`; `idle` when no check is planned). The domain row keeps the schedule's truth
 * (`next_check_at`); this row only carries the runner's columns, which `tenant_domains` cannot
 * (its `status` is the domain's). Live domains with a check planned are queued at once.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('tenant_domain_checks')
    .addColumn('tenant_domain_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_token', 'text')
    .addColumn('available_at', t.timestamp)
    .execute();
  // The fair claim's index (workers/fair-claim.ts): (tenant, due time) over the queued rows.
  await db.schema
    .createIndex('tenant_domain_checks_tenant_due')
    .on('tenant_domain_checks')
    .columns(['tenant_id', 'available_at'])
    .where(sql.ref('status'), 'in', ['due', 'checking'])
    .execute();
  await sql`
    insert into tenant_domain_checks (tenant_domain_id, tenant_id, status, attempts, available_at)
    select id, tenant_id, 'due', 0, next_check_at from tenant_domains
    where deleted_at is null and next_check_at is not null
  `.execute(db);
}
