import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { migrateToLatest } from './migrate.js';

describe('migrations that arrive out of order', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.cleanup());

  it('runs a migration numbered below ones the database already ran (branches merged in any order)', async () => {
    // The database as it was before 0018 reached it: later migrations ran, 0018 did not.
    await sql`delete from kysely_migration where name = '0018-fair-jobs'`.execute(db.kysely);
    await db.kysely.schema.dropIndex('audience_versions_tenant_due').execute();
    await db.kysely.schema.dropIndex('enrichment_jobs_tenant_due').execute();
    await sql`create index audience_versions_runnable on audience_versions (available_at)`.execute(db.kysely);
    await sql`create index enrichment_jobs_runnable on enrichment_jobs (available_at)`.execute(db.kysely);

    expect(await migrateToLatest(db)).toEqual(['0018-fair-jobs']);
    expect(await migrateToLatest(db)).toEqual([]);
  });
});
