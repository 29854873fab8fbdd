import { sql, type Kysely } from 'kysely';

/**
 * What a tenant's hosts serve changed (issue 27, docs/pages-runtime.md#page-cache): one counter per
 * tenant, bumped in the same transaction as every change that alters what a link serves (a version
 * published, a link, page, audience or domain changed). Every process compares the counters about
 * twice a second and forgets the pages it keeps in memory for a tenant whose counter moved.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table serving_revisions (
      tenant_id text primary key references tenants(id),
      revision integer not null
    )`.execute(db);
}
