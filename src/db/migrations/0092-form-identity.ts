import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Visitors cannot rewrite records (issue 26, docs/forms.md#identity): an enrichment job remembers
 * whether its submission created the person, the only person whose empty fields it may fill.
 * Jobs queued before: false (they fill nothing).
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .alterTable('enrichment_jobs')
    .addColumn('person_created', t.boolean, (c) => c.notNull().defaultTo(false))
    .execute();
}
