import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Audiences and their versions (the version row in a runnable status is also the generation
 * job), audience sessions (read-only analytics), tenant domains and page links.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);

  await db.schema
    .createTable('audiences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', 'text', (c) => c.notNull().references('pages.id'))
    .addColumn('computed_name', 'text', (c) => c.notNull())
    .addColumn('custom_name', 'text')
    .addColumn('is_new_page_agent', t.boolean, (c) => c.notNull())
    .addColumn('person_id', 'text')
    .addColumn('person_route_key', 'text')
    .addColumn('action_form_id_override', 'text')
    .addColumn('action_form_instructions_override', 'text')
    .addColumn('action_url_override', 'text')
    .addColumn('supplementary_context', 'text')
    .addColumn('metadata_override', t.json)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('archived_at', t.timestamp)
    .execute();
  await db.schema.createIndex('audiences_page').on('audiences').columns(['tenant_id', 'page_id', 'id']).execute();

  await db.schema
    .createTable('audience_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('audience_id', 'text', (c) => c.notNull().references('audiences.id'))
    .addColumn('version_number', t.bigint, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_new_page_agent', t.boolean, (c) => c.notNull())
    .addColumn('supplementary_context', 'text')
    .addColumn('operation_key', 'text')
    .addColumn('queue_duration_ms', t.bigint)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('queued_at', t.timestamp)
    .addColumn('became_draft_at', t.timestamp)
    .addColumn('published_at', t.timestamp)
    .addColumn('cancelled_at', t.timestamp)
    .addColumn('obsolete_at', t.timestamp)
    .addColumn('archived_at', t.timestamp)
    // The job: when the worker may take it next (queued: at once; pending: the retry time;
    // processing: the end of the lease), the attempts made, and the token of the current lease.
    .addColumn('available_at', t.timestamp)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_token', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('artifact', t.json)
    .execute();
  await db.schema
    .createIndex('audience_versions_number')
    .on('audience_versions')
    .columns(['audience_id', 'version_number'])
    .unique()
    .execute();
  await db.schema
    .createIndex('audience_versions_operation_key')
    .on('audience_versions')
    .columns(['tenant_id', 'audience_id', 'operation_key'])
    .unique()
    .execute();
  // At most one published version per audience, enforced by the database as well as the code.
  await db.schema
    .createIndex('audience_versions_one_published')
    .on('audience_versions')
    .column('audience_id')
    .unique()
    .where(sql.ref('status'), '=', 'published')
    .execute();
  // The generation queue: only runnable versions are in this index.
  await db.schema
    .createIndex('audience_versions_runnable')
    .on('audience_versions')
    .column('available_at')
    .where(sql.ref('status'), 'in', ['queued', 'pending', 'processing'])
    .execute();

  await db.schema
    .createTable('audience_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text', (c) => c.notNull())
    .addColumn('analytics_session_id', 'text', (c) => c.notNull())
    .addColumn('page_title', 'text', (c) => c.notNull())
    .addColumn('page_url', 'text', (c) => c.notNull())
    .addColumn('form_submission_id', 'text', (c) => c.notNull())
    .addColumn('form_submission_identifier', 'text', (c) => c.notNull())
    .addColumn('form_submission_email', 'text', (c) => c.notNull())
    .addColumn('form_submission_phone', 'text', (c) => c.notNull())
    .addColumn('has_conversion', t.boolean, (c) => c.notNull())
    .addColumn('has_form_submit', t.boolean, (c) => c.notNull())
    .addColumn('is_bounce', t.boolean, (c) => c.notNull())
    .addColumn('max_scroll_depth_percentage', 'double precision', (c) => c.notNull())
    .addColumn('questions_asked_count', 'integer', (c) => c.notNull())
    .addColumn('time_spent_seconds', 'double precision', (c) => c.notNull())
    .addColumn('total_clicks_count', 'integer', (c) => c.notNull())
    .addColumn('session_started_at', t.timestamp, (c) => c.notNull())
    .addColumn('session_ended_at', t.timestamp, (c) => c.notNull())
    .addColumn('utm_campaign', 'text', (c) => c.notNull())
    .addColumn('utm_content', 'text', (c) => c.notNull())
    .addColumn('utm_medium', 'text', (c) => c.notNull())
    .addColumn('utm_source', 'text', (c) => c.notNull())
    .addColumn('utm_term', 'text', (c) => c.notNull())
    .execute();
  // Listing a page's sessions in a time range, newest first, is a range scan of one of these.
  await db.schema
    .createIndex('audience_sessions_page_time')
    .on('audience_sessions')
    .columns(['tenant_id', 'page_id', 'session_started_at', 'id'])
    .execute();
  await db.schema
    .createIndex('audience_sessions_audience_time')
    .on('audience_sessions')
    .columns(['tenant_id', 'audience_id', 'session_started_at', 'id'])
    .execute();

  // Sessions per page (audience_id '') and per audience per hour, kept in step by the one writer
  // (insertSessions): the totalCount of a time range sums whole hours here and counts only the
  // partial hours at its ends, so it costs the same however many sessions the range holds.
  await db.schema
    .createTable('audience_session_hours')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text', (c) => c.notNull())
    .addColumn('hour', t.timestamp, (c) => c.notNull())
    .addColumn('sessions', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('audience_session_hours_pk', ['tenant_id', 'page_id', 'audience_id', 'hour'])
    .execute();

  await db.schema
    .createTable('tenant_domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tenant_domains_hostname').on('tenant_domains').column('hostname').unique().execute();
  await db.schema.createIndex('tenant_domains_tenant').on('tenant_domains').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('page_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('tenant_domain_id', 'text', (c) => c.references('tenant_domains.id'))
    // tenant_domain_id or '' : a unique index treats NULLs as distinct, this key does not.
    .addColumn('domain_key', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text', (c) => c.notNull().references('audiences.id'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('page_links_path')
    .on('page_links')
    .columns(['tenant_id', 'domain_key', 'path'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema.createIndex('page_links_tenant').on('page_links').columns(['tenant_id', 'id']).execute();
}
