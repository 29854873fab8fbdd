import type { Kysely } from 'kysely';

/**
 * Issue 23, pages: archiving remembers the status it left (`draft` or `published`), so that a
 * restore returns the page to exactly that status (docs/api.md, The page status table). Null while
 * the page is not archived, and for pages archived before this column existed (a restore then
 * returns them to `draft`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('pages').addColumn('status_before_archive', 'text').execute();
}
