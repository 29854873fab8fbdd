import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Erasing a person (issue 26, docs/privacy.md): the audit trail of erasures, which holds no
 * personal data (the person's random id, when, and how many rows of each kind went), and the
 * indexes that find a person's rows without walking a tenant's tables.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('person_erasures')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('erased_at', t.timestamp, (c) => c.notNull())
    .addColumn('counts', t.json, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('person_erasures_person')
    .on('person_erasures')
    .columns(['tenant_id', 'person_id'])
    .unique()
    .execute();
  await db.schema
    .createIndex('form_submissions_person')
    .on('form_submissions')
    .columns(['tenant_id', 'person_id'])
    .execute();
  await db.schema
    .createIndex('audiences_person')
    .on('audiences')
    .columns(['tenant_id', 'person_id'])
    .where(sql.ref('person_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('audience_sessions_form_submission')
    .on('audience_sessions')
    .columns(['tenant_id', 'form_submission_id'])
    .where(sql.ref('form_submission_id'), '!=', '')
    .execute();
}
