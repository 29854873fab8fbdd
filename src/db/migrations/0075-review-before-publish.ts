import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Review before live (issue 23): on a published page, whether a newly generated version goes live
 * by itself (false, what every page did before) or waits as a draft for
 * `POST …/versions/{version_id}/publish` (true). docs/api.md, Publishing, previewing and rolling
 * back versions.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .alterTable('pages')
    .addColumn('review_before_publish', t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .execute();
}
