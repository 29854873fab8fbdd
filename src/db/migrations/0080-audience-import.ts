import { sql, type Kysely } from 'kysely';

/**
 * The batch endpoint and the CSV import (issue 23) find the audience a row's identity decides,
 * on the page, by person or by account, once per row: indexed, so that a 10,000-row import does
 * not scan the page's audiences for every row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('audiences_page_person')
    .on('audiences')
    .columns(['tenant_id', 'page_id', 'person_id'])
    .where(sql.ref('person_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('audiences_page_account')
    .on('audiences')
    .columns(['tenant_id', 'page_id', 'account_id'])
    .where(sql.ref('account_id'), 'is not', null)
    .execute();
}
