import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The per-tenant daily caps of the visitor side (src/db/daily-caps.ts, docs/pages-runtime.md):
 * one row per tenant, UTC day and what is counted (`sessions`, `form_submissions`), holding the
 * places handed out to the service's processes so far that day.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('tenant_daily_counts')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('granted', t.bigint, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('tenant_daily_counts_pk', ['tenant_id', 'day', 'kind'])
    .execute();
}
