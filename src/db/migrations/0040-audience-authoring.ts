import type { Kysely } from 'kysely';

/**
 * Audiences created over the API (issue 23): an audience may address an account rather than a
 * person (`POST /v0/pages/{page_id}/audiences` with `accountId`). Null on every audience made
 * before, and on audiences for a person or a named segment.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audiences').addColumn('account_id', 'text').execute();
}
