import { beforeAll, describe, expect, it } from 'vitest';
import { everyRow } from '../../../test/catalogue.js';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { ENGINE, problem, testConfig, useTestApp, type Tenant } from '../../../test/harness.js';
import type { CliContext } from '../../cli/command.js';
import { newId } from '../../lib/ids.js';
import { sql } from 'kysely';
import { personErasureCommands } from './person-erasures.cli.js';
import * as q from './person-erasures.queries.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const HOST = 'go.alice.localhost';
/** What identifies Sam: none of it may remain anywhere in the database after the erasure. */
const SAM = {
  email: 'Sam.Lee@Globex.example',
  name: 'Sam Lee',
  phone: '+14155550199',
  routeKey: 'sam-lee-globex',
  message: 'Please call me about the Globex rollout',
  question: 'Does this work for Globex in Ohio?',
};

let pageId: string;
let ip = 0;

async function submitForm(fields: Record<string, string>) {
  const page = await visit(t, HOST, '/offers/acme');
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)?.[1] ?? '';
  const res = await t.app.inject({
    method: 'POST',
    url: '/offers/acme',
    remoteAddress: `10.9.0.${++ip}`,
    headers: {
      host: HOST,
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
    },
    payload: new URLSearchParams({
      ap_audience: hidden('ap_audience'),
      ap_action: hidden('ap_action'),
      ...fields,
    }).toString(),
  });
  expect(res.statusCode).toBe(303);
}

async function personByEmail(tenant: Tenant, email: string): Promise<string> {
  const row = await tenant.scope
    .selectFrom('persons')
    .select('id')
    .where('email_normalized', '=', email.toLowerCase())
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A visit, as the page runtime records it, optionally marked by a form submission. */
async function insertSession(
  tenant: Tenant,
  s: { audienceId: string; pageUrl: string; submission?: { id: string; email: string; phone: string; name: string } },
) {
  const id = newId('audienceSession');
  const at = t.clock.now().toISOString();
  await tenant.scope
    .insertInto('audience_sessions', {
      id,
      page_id: pageId,
      audience_id: s.audienceId,
      analytics_session_id: `a-${id}`,
      page_title: 'Offers',
      page_url: s.pageUrl,
      form_submission_id: s.submission?.id ?? '',
      form_submission_identifier: s.submission?.name ?? '',
      form_submission_email: s.submission?.email ?? '',
      form_submission_phone: s.submission?.phone ?? '',
      has_conversion: s.submission !== undefined,
      has_form_submit: s.submission !== undefined,
      is_bounce: false,
      max_scroll_depth_percentage: 50,
      questions_asked_count: 1,
      time_spent_seconds: 30,
      total_clicks_count: 2,
      session_started_at: at,
      session_ended_at: at,
      utm_campaign: '',
      utm_content: '',
      utm_medium: '',
      utm_source: '',
      utm_term: '',
    })
    .execute();
  await tenant.scope
    .insertInto('agent_messages', {
      id: newId('agentMessage'),
      session_id: id,
      page_id: pageId,
      position: 0,
      role: 'question',
      content: SAM.question,
      sources: '[]',
      created_at: at,
    })
    .execute();
  return id;
}

const erase = (tenant: Tenant, id: string) => t.request(tenant, { method: 'DELETE', url: `/v0/persons/${id}` });
const exportOf = (tenant: Tenant, id: string) => t.request(tenant, { method: 'GET', url: `/v0/persons/${id}/export` });

let sam: string;
let other: string;
let personal: { audienceId: string; versionId: string };
let markedSession: string;
let ownPageSession: string;
let acme: string;

beforeAll(async () => {
  pageId = await makePage(alice.scope, t.clock, {
    title: 'Offers',
    actions: [{ purpose: 'Talk to us', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
  });
  acme = (await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Acme', personRouteKey: null })).audienceId;
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId: acme });

  await submitForm({ email: SAM.email, name: SAM.name, phoneNumber: SAM.phone, message: SAM.message });
  sam = await personByEmail(alice, SAM.email);
  await t.request(alice, {
    method: 'POST',
    url: '/v0/person_logs',
    payload: {
      personId: sam,
      source: 'crm',
      type: 'note',
      payload: { note: `${SAM.name} asked for a quote` },
      idempotencyKey: 'crm-note-1',
    },
  });
  personal = await makeAudience(alice.scope, t.clock, {
    pageId,
    personId: sam,
    computedName: `${SAM.name} · Globex`,
    personRouteKey: SAM.routeKey,
    supplementaryContext: `${SAM.name} runs the Ohio office`,
  });
  const submission = await alice.scope
    .selectFrom('form_submissions')
    .select('id')
    .where('person_id', '=', sam)
    .executeTakeFirstOrThrow();
  markedSession = await insertSession(alice, {
    audienceId: acme,
    pageUrl: `http://${HOST}/offers/acme`,
    submission: { id: submission.id, email: SAM.email, phone: SAM.phone, name: SAM.name },
  });
  ownPageSession = await insertSession(alice, {
    audienceId: personal.audienceId,
    pageUrl: `http://${HOST}/pricing/${SAM.routeKey}`,
  });

  // Someone else, whose data must stay as it is.
  await submitForm({ email: 'kim@initech.example', name: 'Kim Park', message: 'Hello' });
  other = await personByEmail(alice, 'kim@initech.example');
});

describe('GET /v0/persons/{id}/export', () => {
  it('returns everything stored about the person', async () => {
    const res = await exportOf(alice, sam);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    // The form's phone number is submitted data (docs/forms.md#identity): on the submission, not the person.
    expect(body.person).toMatchObject({ personId: sam, email: SAM.email, name: SAM.name, phoneNumber: null });
    expect(body.personLogs.map((l: { type: string }) => l.type).sort()).toEqual(['form-submitted', 'note']);
    expect(body.formSubmissions).toEqual([
      expect.objectContaining({ email: SAM.email, phoneNumber: SAM.phone, message: SAM.message, audienceId: acme }),
    ]);
    expect(body.enrichmentJobs).toEqual([expect.objectContaining({ email: SAM.email, status: 'queued' })]);
    expect(body.audiences).toEqual([
      expect.objectContaining({ audienceId: personal.audienceId, personRouteKey: SAM.routeKey }),
    ]);
    expect(body.audienceSessions.map((s: { audienceSessionId: string }) => s.audienceSessionId).sort()).toEqual(
      [markedSession, ownPageSession].sort(),
    );
    expect(body.agentMessages).toHaveLength(2);
    expect(body.agentMessages[0]).toMatchObject({ content: SAM.question, role: 'question' });
    expect(JSON.stringify(body)).not.toContain('kim@initech.example');
  });

  it('is 404 for other tenants, unknown ids', async () => {
    for (const [tenant, id] of [
      [bob, sam],
      [alice, 'person_01h0000000000000000000000'],
    ] as const) {
      const res = await exportOf(tenant, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });
});

describe('DELETE /v0/persons/{id}', () => {
  it('is 404 for another tenant’s person and changes nothing', async () => {
    const res = await erase(bob, sam);
    expect(res.statusCode).toBe(404);
    expect((await t.request(alice, { method: 'GET', url: `/v0/persons/${sam}` })).statusCode).toBe(200);
  });

  it('erases the person and everything that identifies them, keeps sessions as anonymous analytics', async () => {
    const before = await everyRow(t.database);
    const found = [...before.values()].flat().join('\n');
    for (const value of [SAM.email, SAM.name, SAM.phone, SAM.routeKey, SAM.message, SAM.question])
      expect(found).toContain(value);

    const res = await erase(alice, sam);
    expect(res.statusCode).toBe(204);

    // Nothing that identifies Sam is left in any table (the database's catalogue, not our list).
    const after = await everyRow(t.database);
    const leftovers: string[] = [];
    for (const [table, rows] of after)
      for (const row of rows)
        for (const value of [
          SAM.email,
          SAM.email.toLowerCase(),
          SAM.name,
          SAM.phone,
          SAM.routeKey,
          SAM.message,
          SAM.question,
        ])
          if (row.includes(value)) leftovers.push(`${table}: ${value}`);
    expect(leftovers).toEqual([]);
    expect(after.get('persons')!.join()).not.toContain(sam);
    expect(after.get('person_logs')!.join()).not.toContain(sam);

    // The visits stay, anonymous.
    const sessions = await alice.scope
      .selectFrom('audience_sessions')
      .selectAll()
      .where('id', 'in', [markedSession, ownPageSession])
      .orderBy('id')
      .execute();
    expect(sessions).toHaveLength(2);
    const marked = sessions.find((s) => s.id === markedSession)!;
    expect(marked).toMatchObject({
      has_form_submit: true,
      form_submission_id: '',
      form_submission_email: '',
      form_submission_phone: '',
      form_submission_identifier: '',
      time_spent_seconds: 30,
    });
    expect(sessions.find((s) => s.id === ownPageSession)!.page_url).toBe(`http://${HOST}/pricing/[erased]`);

    // Their own page stops serving and forgets whom it addressed.
    const audience = await alice.scope
      .selectFrom('audiences')
      .selectAll()
      .where('id', '=', personal.audienceId)
      .executeTakeFirstOrThrow();
    expect(audience).toMatchObject({ person_id: null, person_route_key: null, computed_name: 'Erased person' });
    expect(audience.archived_at).not.toBeNull();

    // The audit trail: when, how much, no personal data.
    const audit = await alice.scope.selectFrom('person_erasures').selectAll().execute();
    expect(audit).toEqual([expect.objectContaining({ person_id: sam, erased_at: t.clock.now().toISOString() })]);
    expect(audit[0]!.counts).toMatchObject({
      persons: 1,
      person_logs: 2,
      form_submissions: 1,
      enrichment_jobs: 1,
      idempotency_keys: 1,
    });
    expect(await alice.scope.selectFrom('idempotency_keys').select('key').execute()).not.toContainEqual({
      key: 'crm-note-1',
    });

    // Kim is untouched.
    const kim = await exportOf(alice, other);
    expect(kim.statusCode).toBe(200);
    expect(kim.json().formSubmissions).toHaveLength(1);
    expect(kim.json().personLogs).toHaveLength(1);
  });

  it('is idempotent: 204 again for an erased person; the person is 404 everywhere else', async () => {
    const audit = await alice.scope.selectFrom('person_erasures').selectAll().execute();
    const again = await erase(alice, sam);
    expect(again.statusCode).toBe(204);
    expect(await alice.scope.selectFrom('person_erasures').selectAll().execute()).toEqual(audit);
    for (const res of [
      await t.request(alice, { method: 'GET', url: `/v0/persons/${sam}` }),
      await exportOf(alice, sam),
      await erase(bob, sam),
      await erase(alice, 'person_01h0000000000000000000000'),
    ])
      expect(res.statusCode).toBe(404);
  });
});

describe('CLI: person export, person erase', () => {
  const command = (name: string) => personErasureCommands.find((c) => c.path.join(' ') === `person ${name}`)!;
  const ctx = (): CliContext => ({
    database: t.database,
    db: t.database.kysely,
    config: testConfig(t.database.env),
    clock: t.clock,
    migrations: {},
  });

  it('exports and erases a person of the named tenant, with the same rules as the API', async () => {
    const id = await makePerson(alice.scope, t.clock, { email: 'cli.person@corp.example', name: 'Cli Person' });
    const values = { tenant: alice.tenantId };
    const exported = await command('export').run(ctx(), { values, positionals: [id] });
    expect(exported).toMatchObject({ person: { personId: id, email: 'cli.person@corp.example' } });
    await expect(command('erase').run(ctx(), { values: { tenant: bob.tenantId }, positionals: [id] })).rejects.toThrow(
      /No person/,
    );
    const erased = await command('erase').run(ctx(), { values, positionals: [id] });
    expect(erased).toMatchObject({ personId: id, alreadyErased: false, counts: { persons: 1, person_logs: 1 } });
    const again = await command('erase').run(ctx(), { values, positionals: [id] });
    expect(again).toMatchObject({ personId: id, alreadyErased: true, erasedAt: erased.erasedAt });
    await expect(command('export').run(ctx(), { values, positionals: [id] })).rejects.toThrow(/No person/);
  });
});

describe('a person log written while the person is erased', () => {
  // On PostgreSQL the log's read of the person and the erasure's delete run at once: the log's
  // insert then met a deleted person (a foreign-key violation), answered with a 422 naming no field.
  it('answers 201 (erased with the person) or the unknown-person 422, never a 5xx', async () => {
    const people = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        makePerson(alice.scope, t.clock, { email: `racer${i}@corp.example`, name: `Racer ${i}` }),
      ),
    );
    const log = (personId: string, n: number) =>
      t.request(alice, {
        method: 'POST',
        url: '/v0/person_logs',
        payload: { personId, source: 'crm', type: 'note', payload: { n } },
      });
    const results = await Promise.all(
      // The erasure starts a little later for each person, so that some land inside a log's write.
      people.flatMap((id, i) => [
        log(id, 1),
        log(id, 2),
        new Promise<void>((resolve) => setTimeout(resolve, i)).then(() => erase(alice, id)),
        log(id, 3),
      ]),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c >= 500)).toEqual([]);
    for (const res of results) {
      if (res.statusCode === 422) expect(problem(res)).toMatchObject({ code: 'validation_failed' });
      else expect([201, 204]).toContain(res.statusCode);
    }
    // Whatever was written before the erasure went with it.
    const left = await alice.scope.selectFrom('person_logs').select('id').where('person_id', 'in', people).execute();
    expect(left).toEqual([]);
  });

  // The exact interleaving, on PostgreSQL: the log has read the person (the erasure is not committed
  // yet) and waits on its row lock to insert; the erasure then commits.
  it.skipIf(ENGINE !== 'postgres')('a log waiting on the erasure’s lock answers 422 once it committed', async () => {
    const id = await makePerson(alice.scope, t.clock, { email: 'waiter@corp.example', name: 'Wai Ter' });
    let pending: ReturnType<typeof t.request> | undefined;
    await alice.scope.transaction(async (tx) => {
      await q.lockPerson(tx, id);
      await q.eraseRows(tx, id, await q.personReferences(tx, id), t.clock.now().toISOString());
      pending = t.request(alice, {
        method: 'POST',
        url: '/v0/person_logs',
        payload: { personId: id, source: 'crm', type: 'note', payload: { n: 1 } },
      });
      // Commit only once the log's write waits on the person's row.
      for (;;) {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and query ilike '%person_logs%'`.execute(t.database.kysely);
        if (waiting.rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    const res = await pending!;
    expect(res.statusCode, res.body).toBe(422);
    expect(problem(res)).toMatchObject({ code: 'validation_failed', errors: [{ path: '/body/personId' }] });
  });
});
