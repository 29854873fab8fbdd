import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The page runtime: tenant domains can be removed (kept as rows with `deleted_at`, so a host name
 * is free again once its domain is removed), links are listed by audience, and a person's own
 * audience is found by its route key among the audiences of a page.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);

  await db.schema.alterTable('tenant_domains').addColumn('deleted_at', t.timestamp).execute();
  await db.schema.dropIndex('tenant_domains_hostname').execute();
  await db.schema
    .createIndex('tenant_domains_live_hostname')
    .on('tenant_domains')
    .column('hostname')
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createIndex('page_links_audience')
    .on('page_links')
    .columns(['tenant_id', 'audience_id', 'id'])
    .execute();

  await db.schema
    .createIndex('audiences_route_key')
    .on('audiences')
    .columns(['tenant_id', 'person_route_key', 'page_id'])
    .where(sql.ref('person_route_key'), 'is not', null)
    .execute();

  // Page-hours oldest first (the sessions' retention walks them).
  await db.schema
    .createIndex('audience_session_hours_page_hour')
    .on('audience_session_hours')
    .column('hour')
    .where(sql.ref('audience_id'), '=', '')
    .execute();
}
