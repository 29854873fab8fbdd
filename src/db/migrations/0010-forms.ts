import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Form submissions from served pages (docs/forms.md). `dedupe_key` is what makes a submission
 * happen once: `t:<token>` for the page script's per-view token, `c:<content hash>:<window>` for
 * a submission without one; unique per tenant, so concurrent repeats cannot both insert.
 * `content_hash` finds an identical submission of the previous window.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const n = columnTypes(engine).names;
  await sql
    .raw(
      `create table form_submissions (
        id text primary key,
        tenant_id text not null references tenants(id),
        page_id text not null,
        audience_id text not null,
        page_link_id text not null,
        action_id text not null,
        form_id text not null,
        analytics_session_id text,
        person_id text not null,
        email text not null,
        name text,
        phone_number text,
        company text,
        message text,
        page_url text not null,
        dedupe_key text not null,
        content_hash text not null,
        created_at ${n.timestamp} not null
      )`,
    )
    .execute(db);
  await db.schema
    .createIndex('form_submissions_dedupe')
    .on('form_submissions')
    .columns(['tenant_id', 'dedupe_key'])
    .unique()
    .execute();
  await db.schema
    .createIndex('form_submissions_content')
    .on('form_submissions')
    .columns(['tenant_id', 'content_hash', 'created_at'])
    .execute();
  await db.schema
    .createIndex('form_submissions_page')
    .on('form_submissions')
    .columns(['tenant_id', 'page_id', 'created_at'])
    .execute();
}
