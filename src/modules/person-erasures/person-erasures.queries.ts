import { sql } from 'kysely';
import { forUpdate, jsonText } from '../../db/dialect.js';
import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/**
 * The SQL of erasing and exporting a person (docs/privacy.md). It names every table that holds a
 * person's data, in one place, so that test/foundation/personal-data.test.ts can hold it to the
 * database's catalogue.
 */

/** `in (…)` lists in chunks: SQLite takes at most 32,766 values in one statement. */
const CHUNK = 500;
function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** The text that replaces an erased person's route key in stored page URLs. */
const ERASED_KEY = '[erased]';
/** The name an erased person's audiences keep. */
const ERASED_AUDIENCE_NAME = 'Erased person';

export async function lockPerson(scope: TenantScope, personId: string) {
  return forUpdate(
    scope.engine,
    scope.selectFrom('persons').selectAll('persons').where('persons.id', '=', personId),
  ).executeTakeFirst();
}

export async function findErasure(scope: TenantScope, personId: string) {
  return scope
    .selectFrom('person_erasures')
    .select(['person_erasures.id', 'person_erasures.erased_at', 'person_erasures.counts'])
    .where('person_erasures.person_id', '=', personId)
    .executeTakeFirst();
}

/** What points at the person: its submissions, the audiences addressed to it, their versions, the sessions of either. */
export async function personReferences(scope: TenantScope, personId: string) {
  const submissionIds = (
    await scope
      .selectFrom('form_submissions')
      .select('form_submissions.id')
      .where('form_submissions.person_id', '=', personId)
      .execute()
  ).map((r) => r.id);
  const audiences = await scope
    .selectFrom('audiences')
    .select(['audiences.id', 'audiences.person_route_key'])
    .where('audiences.person_id', '=', personId)
    .execute();
  const audienceIds = audiences.map((a) => a.id);
  const versionIds: string[] = [];
  const sessionIds = new Set<string>();
  for (const part of chunks(audienceIds)) {
    const versions = await scope
      .selectFrom('audience_versions')
      .select('audience_versions.id')
      .where('audience_versions.audience_id', 'in', part)
      .execute();
    versionIds.push(...versions.map((v) => v.id));
    const sessions = await scope
      .selectFrom('audience_sessions')
      .select('audience_sessions.id')
      .where('audience_sessions.audience_id', 'in', part)
      .execute();
    for (const s of sessions) sessionIds.add(s.id);
  }
  for (const part of chunks(submissionIds)) {
    const sessions = await scope
      .selectFrom('audience_sessions')
      .select('audience_sessions.id')
      .where('audience_sessions.form_submission_id', 'in', part)
      .execute();
    for (const s of sessions) sessionIds.add(s.id);
  }
  return { submissionIds, audiences, versionIds, sessionIds: [...sessionIds] };
}

export type PersonReferences = Awaited<ReturnType<typeof personReferences>>;

/** Removes or scrubs every row that identifies the person; returns the rows touched by table. */
export async function eraseRows(
  tx: TenantScope,
  personId: string,
  refs: PersonReferences,
  now: string,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {
    agent_messages: 0,
    audience_sessions: 0,
    enrichment_jobs: 0,
    events: 0,
    form_submissions: 0,
    person_logs: 0,
    audiences: 0,
    audience_versions: 0,
    agent_passages: 0,
    idempotency_keys: 0,
    persons: 0,
  };
  const add = (table: string, result: { numDeletedRows?: bigint; numUpdatedRows?: bigint }) => {
    counts[table] = (counts[table] ?? 0) + Number(result.numDeletedRows ?? result.numUpdatedRows ?? 0n);
  };

  // What visitors typed to the page's agent in the person's visits.
  for (const part of chunks(refs.sessionIds))
    add('agent_messages', await tx.deleteFrom('agent_messages').where('session_id', 'in', part).executeTakeFirst());

  // Sessions stay as anonymous analytics: the identities a form copied onto them go.
  for (const part of chunks(refs.submissionIds))
    add(
      'audience_sessions',
      await tx
        .updateTable('audience_sessions')
        .set({
          form_submission_id: '',
          form_submission_identifier: '',
          form_submission_email: '',
          form_submission_phone: '',
        })
        .where('form_submission_id', 'in', part)
        .executeTakeFirst(),
    );
  // The person's route key in the URLs of the visits to their own page.
  for (const audience of refs.audiences) {
    if (audience.person_route_key === null) continue;
    add(
      'audience_sessions',
      await tx
        .updateTable('audience_sessions')
        .set({
          page_url: sql<string>`replace(page_url, ${`/${audience.person_route_key}`}, ${`/${ERASED_KEY}`})`,
        })
        .where('audience_id', '=', audience.id)
        .executeTakeFirst(),
    );
  }

  add('enrichment_jobs', await tx.deleteFrom('enrichment_jobs').where('person_id', '=', personId).executeTakeFirst());
  for (const part of chunks(refs.submissionIds))
    add(
      'enrichment_jobs',
      await tx.deleteFrom('enrichment_jobs').where('form_submission_id', 'in', part).executeTakeFirst(),
    );

  // form.submitted, form.enriched and form.enrichment_failed carry the person (and what they typed).
  // Deliveries still pending for them close without sending (the delivery finds no event).
  add(
    'events',
    await tx
      .deleteFrom('events')
      .where(jsonText(tx.engine, sql.ref('data'), ['person', 'personId']), '=', personId)
      .executeTakeFirst(),
  );
  // page.version.* of their own pages carry the version as the API shows it (names, context).
  for (const part of chunks(refs.audiences.map((a) => a.id)))
    add(
      'events',
      await tx
        .deleteFrom('events')
        .where(jsonText(tx.engine, sql.ref('data'), ['audienceId']), 'in', part)
        .executeTakeFirst(),
    );

  add('form_submissions', await tx.deleteFrom('form_submissions').where('person_id', '=', personId).executeTakeFirst());
  add('person_logs', await tx.deleteFrom('person_logs').where('person_id', '=', personId).executeTakeFirst());

  // The person's own pages stop serving and forget who they were for.
  add(
    'audiences',
    await tx
      .updateTable('audiences')
      .set((eb) => ({
        archived_at: eb.fn.coalesce('archived_at', sql<string>`${now}`),
        person_id: null,
        person_route_key: null,
        computed_name: ERASED_AUDIENCE_NAME,
        custom_name: null,
        supplementary_context: null,
      }))
      .where('person_id', '=', personId)
      .executeTakeFirst(),
  );
  for (const part of chunks(refs.versionIds)) {
    add(
      'audience_versions',
      await tx
        .updateTable('audience_versions')
        .set({ artifact: null, supplementary_context: null })
        .where('id', 'in', part)
        .executeTakeFirst(),
    );
    add('agent_passages', await tx.deleteFrom('agent_passages').where('scope_key', 'in', part).executeTakeFirst());
  }

  // Stored answers of person-log writes about them (their request's hash derives from what was sent).
  add(
    'idempotency_keys',
    await tx
      .deleteFrom('idempotency_keys')
      .where(jsonText(tx.engine, sql.ref('response_body'), ['personId']), '=', personId)
      .executeTakeFirst(),
  );

  add('persons', await tx.deleteFrom('persons').where('id', '=', personId).executeTakeFirst());
  return counts;
}

export async function insertErasure(
  tx: TenantScope,
  row: { id: string; personId: string; erasedAt: string; counts: Record<string, number> },
) {
  await tx
    .insertInto('person_erasures', {
      id: row.id,
      person_id: row.personId,
      erased_at: row.erasedAt,
      counts: json(row.counts),
    })
    .execute();
}

// ---- Export: everything stored about the person ----

export async function exportRows(scope: TenantScope, personId: string, refs: PersonReferences) {
  const logs = await scope
    .selectFrom('person_logs')
    .select(['id', 'source', 'type', 'payload', 'created_at'])
    .where('person_id', '=', personId)
    .orderBy('id')
    .execute();
  const submissions = await scope
    .selectFrom('form_submissions')
    .selectAll()
    .where('person_id', '=', personId)
    .orderBy('id')
    .execute();
  const enrichmentJobs = await scope
    .selectFrom('enrichment_jobs')
    .selectAll()
    .where('person_id', '=', personId)
    .orderBy('created_at')
    .execute();
  const audiences = await scope
    .selectFrom('audiences')
    .select(['id', 'page_id', 'person_route_key', 'computed_name', 'custom_name', 'created_at', 'archived_at'])
    .where('person_id', '=', personId)
    .orderBy('id')
    .execute();
  const sessions = [];
  const messages = [];
  for (const part of chunks(refs.sessionIds)) {
    sessions.push(...(await scope.selectFrom('audience_sessions').selectAll().where('id', 'in', part).execute()));
    messages.push(
      ...(await scope
        .selectFrom('agent_messages')
        .select(['id', 'session_id', 'page_id', 'position', 'role', 'content', 'created_at'])
        .where('session_id', 'in', part)
        .execute()),
    );
  }
  sessions.sort((a, b) => a.session_started_at.localeCompare(b.session_started_at) || a.id.localeCompare(b.id));
  messages.sort((a, b) => a.session_id.localeCompare(b.session_id) || a.position - b.position);
  return { logs, submissions, enrichmentJobs, audiences, sessions, messages };
}
