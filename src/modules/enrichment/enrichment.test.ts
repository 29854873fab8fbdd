import { describe, expect, it } from 'vitest';
import { enrichmentEvents, enrichmentRunner, jobOf, submitForEnrichment } from '../../../test/factories/enrichment.js';
import { makePerson } from '../../../test/factories/persons.js';
import { pino } from 'pino';
import { ENGINE, testConfig, useTestApp } from '../../../test/harness.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { newId } from '../../lib/ids.js';
import { ensureAccount } from '../accounts/index.js';
import { patchPerson } from '../persons/index.js';
import { companyDomainOfEmail, type Enricher } from './enrichment.enricher.js';
import { fail } from '../../workers/leased-jobs.js';
import { enqueueEnrichment } from './enrichment.jobs.js';
import { enrichmentModule } from './enrichment.module.js';
import { ENRICHMENT_CHANNEL } from './index.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;
const jobs = (overrides: Parameters<typeof enrichmentRunner>[2] = {}) =>
  enrichmentRunner(t.database, t.clock, overrides);
const accountOf = (tenantScope: TenantScope, domain: string) =>
  tenantScope.selectFrom('accounts').selectAll().where('domain', '=', domain).executeTakeFirst();
const personRow = (id: string) =>
  alice.scope.selectFrom('persons').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('the domain rules', () => {
  it('classifies free-mail, disposable and invalid domains from the maintained lists', () => {
    expect(companyDomainOfEmail('jane@Acme-Widgets.COM')).toEqual({ ok: true, domain: 'acme-widgets.com' });
    for (const email of ['a@gmail.com', 'a@gmx.at', 'a@gmx.de', 'a@web.de', 'a@proton.me', 'a@outlook.com']) {
      expect(companyDomainOfEmail(email)).toEqual({ ok: false, reason: 'free_mail_domain' });
    }
    for (const email of ['a@mailinator.com', 'a@yopmail.com']) {
      expect(companyDomainOfEmail(email)).toEqual({ ok: false, reason: 'disposable_domain' });
    }
    for (const email of ['a@intranet.local', 'a@localhost', 'a@[127.0.0.1]', 'a@exa_mple.com', 'no-at-sign', 'a@']) {
      expect(companyDomainOfEmail(email)).toEqual({ ok: false, reason: 'invalid_domain' });
    }
  });
});

describe('enqueueEnrichment', () => {
  it('is one job per submission however often it is called', async () => {
    const personId = await makePerson(alice.scope, t.clock, { email: 'once@once-corp.example' });
    const request = {
      formSubmissionId: newId('page').replace('page_', 'formsub_'),
      personId,
      email: 'once@once-corp.example',
      name: 'Once',
      company: 'Once Corp',
      pageId: newId('page'),
      audienceId: newId('audience'),
      personCreated: true,
    };
    t.notified.length = 0;
    await alice.scope.transaction((tx) => enqueueEnrichment(tx, request, t.clock));
    // The commit woke the worker; the second call queued nothing and wakes nobody.
    expect(t.notified).toEqual([ENRICHMENT_CHANNEL]);
    await alice.scope.transaction((tx) => enqueueEnrichment(tx, { ...request, email: 'other@x.example' }, t.clock));
    expect(t.notified).toEqual([ENRICHMENT_CHANNEL]);
    const rows = await alice.scope
      .selectFrom('enrichment_jobs')
      .selectAll()
      .where('person_id', '=', personId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'queued',
      attempts: 0,
      email: 'once@once-corp.example',
      company: 'Once Corp',
    });
    // Drain it so later tests count only their own jobs.
    await jobs().drain();
  });

  it('writes nothing, and wakes nobody, when the caller’s transaction rolls back', async () => {
    const personId = await makePerson(alice.scope, t.clock);
    const formSubmissionId = newId('page').replace('page_', 'formsub_');
    t.notified.length = 0;
    await expect(
      alice.scope.transaction(async (tx) => {
        await enqueueEnrichment(
          tx,
          {
            formSubmissionId,
            personId,
            email: 'x@y.example',
            name: null,
            company: null,
            pageId: 'p',
            audienceId: 'a',
            personCreated: true,
          },
          t.clock,
        );
        throw new Error('the submission failed');
      }),
    ).rejects.toThrow('the submission failed');
    expect(
      await alice.scope
        .selectFrom('enrichment_jobs')
        .selectAll()
        .where('form_submission_id', '=', formSubmissionId)
        .execute(),
    ).toEqual([]);
    expect(t.notified).not.toContain(ENRICHMENT_CHANNEL);
  });
});

describe('the domain enricher', () => {
  it('a business email: creates the account, fills the person’s domain, moves latestActivityAt, emits form.enriched', async () => {
    const { personId, formSubmissionId } = await submitForEnrichment(alice, t.clock, 'jane@acme-widgets.example');
    const submittedAt = t.clock.now().toISOString();
    t.clock.advance(1_000);
    expect(await jobs().drain()).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);

    const account = await accountOf(alice.scope, 'acme-widgets.example');
    expect(account).toMatchObject({ name: null, latest_activity_at: submittedAt });
    expect((await personRow(personId)).domain).toBe('acme-widgets.example');
    expect(await accountOf(bob.scope, 'acme-widgets.example')).toBeUndefined();

    const events = await enrichmentEvents(t.database, formSubmissionId);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('form.enriched');
    expect(events[0]!.data).toEqual({
      formSubmissionId,
      person: expect.objectContaining({ personId, email: 'jane@acme-widgets.example', domain: 'acme-widgets.example' }),
      account: expect.objectContaining({
        accountId: account!.id,
        domain: 'acme-widgets.example',
        latestActivityAt: submittedAt,
        linkedPersonsCount: 1,
        linkedPersons: [expect.objectContaining({ personId })],
      }),
      enrichment: { provider: 'domain', fieldsFilled: ['account', 'person.domain'] },
    });
    expect(await jobOf(t.database, formSubmissionId)).toMatchObject({
      status: 'enriched',
      attempts: 1,
      lease_token: null,
    });
  });

  it('links to an existing account and never overwrites what the tenant set', async () => {
    await alice.scope.transaction((tx) => ensureAccount(tx, t.clock, 'kept.example', 'Kept Inc.'));
    const { personId, formSubmissionId } = await submitForEnrichment(alice, t.clock, 'joe@kept.example');
    await patchPerson(alice.scope, t.clock, personId, { domain: 'tenant-chose.example', name: 'Joe Tenant' });
    await jobs().drain();

    expect(await personRow(personId)).toMatchObject({ domain: 'tenant-chose.example', name: 'Joe Tenant' });
    expect(await accountOf(alice.scope, 'kept.example')).toMatchObject({ name: 'Kept Inc.' });
    const [event] = await enrichmentEvents(t.database, formSubmissionId);
    expect(event!.data).toMatchObject({
      account: { domain: 'kept.example', name: 'Kept Inc.' },
      enrichment: { provider: 'domain', fieldsFilled: [] },
    });
  });

  it.each([
    ['someone@gmail.com', 'free_mail_domain'],
    ['someone@gmx.at', 'free_mail_domain'],
    ['someone@mailinator.com', 'disposable_domain'],
    ['someone@intranet.local', 'invalid_domain'],
  ])('%s → form.enrichment_failed (%s), no account, the person unchanged', async (email, reason) => {
    const accountsBefore = await alice.scope.selectFrom('accounts').select('id').execute();
    const { personId, formSubmissionId } = await submitForEnrichment(alice, t.clock, email, {
      personEmail: `p-${reason}@${reason.replace(/_/g, '-')}.example`,
    });
    const before = await personRow(personId);
    await jobs().drain();

    const events = await enrichmentEvents(t.database, formSubmissionId);
    expect(events).toEqual([
      {
        type: 'form.enrichment_failed',
        data: {
          formSubmissionId,
          person: expect.objectContaining({ personId }),
          failure: { reason, attempts: 1, provider: 'domain' },
        },
      },
    ]);
    expect(await alice.scope.selectFrom('accounts').select('id').execute()).toEqual(accountsBefore);
    expect(await personRow(personId)).toEqual(before);
    expect(await jobOf(t.database, formSubmissionId)).toMatchObject({ status: 'failed', failure_reason: reason });
  });
});

/** An enricher that waits until the test lets it answer. */
function gatedEnricher() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let calls = 0;
  const enricher: Enricher = {
    name: 'domain',
    enrich: async () => {
      calls++;
      await gate;
      return { ok: true, findings: { personName: null, companyName: null } };
    },
  };
  return { enricher, open: () => open(), calls: () => calls };
}

describe('exactly one terminal event per job', () => {
  it('a worker that died mid-job: the job waits for its lease, then runs again, one event', async () => {
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'crash@crash-corp.example');
    // A worker claims the job and dies before finishing (kill -9 between the two transactions).
    const [claimed] = await jobs().claim(1);
    expect(claimed).toMatchObject({ form_submission_id: formSubmissionId, status: 'processing', attempts: 1 });

    expect(await jobs().runDue(1)).toEqual([]); // still leased
    t.clock.advance(30_001);
    expect(await jobs().drain()).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);

    // The dead worker's late result cannot finish the job a second time.
    const late = await jobs().finish(
      claimed!,
      fail({ provider: 'domain', reason: 'provider_unavailable', detail: 'late' }),
    );
    expect(late).toEqual({ key: formSubmissionId, outcome: 'stale' });
    expect((await enrichmentEvents(t.database, formSubmissionId)).map((e) => e.type)).toEqual(['form.enriched']);
    expect(await jobOf(t.database, formSubmissionId)).toMatchObject({ status: 'enriched', attempts: 2 });
  });

  it('a slow worker whose lease was taken over finishes nothing, even while the new holder still works', async () => {
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'slow@slow-corp.example');
    const slow = gatedEnricher();
    const first = jobs({ enricher: slow.enricher }).runDue(1);
    while (slow.calls() === 0) await new Promise((r) => setTimeout(r, 5));
    t.clock.advance(30_001);
    const takeover = gatedEnricher();
    const second = jobs({ enricher: takeover.enricher }).runDue(1);
    while (takeover.calls() === 0) await new Promise((r) => setTimeout(r, 5));

    slow.open();
    expect(await first).toEqual([{ key: formSubmissionId, outcome: 'stale' }]);
    expect(await enrichmentEvents(t.database, formSubmissionId)).toHaveLength(0);
    takeover.open();
    expect(await second).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);
    expect(await enrichmentEvents(t.database, formSubmissionId)).toHaveLength(1);
  });

  it('a job whose every run was lost fails once with enrichment_interrupted', async () => {
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'lost@lost-corp.example');
    const losing = jobs({ settings: { leaseMs: 1_000, maxAttempts: 2 } });
    for (let i = 0; i < 2; i++) {
      expect(await losing.claim(1)).toHaveLength(1);
      t.clock.advance(1_001);
    }
    expect(await losing.drain()).toEqual([{ key: formSubmissionId, outcome: 'given up' }]);
    const events = await enrichmentEvents(t.database, formSubmissionId);
    expect(events).toEqual([
      {
        type: 'form.enrichment_failed',
        data: expect.objectContaining({
          failure: { reason: 'enrichment_interrupted', attempts: 2, provider: 'domain' },
        }),
      },
    ]);
  });

  it(`two workers racing over many jobs emit one event per job (${ENGINE})`, async () => {
    const submissions = [];
    for (let i = 0; i < 30; i++) {
      submissions.push(await submitForEnrichment(i % 2 ? alice : bob, t.clock, `racer${i}@race${i % 5}.example`));
    }
    const steps = (await Promise.all([jobs().drain(), jobs().drain(), jobs().drain()])).flat();
    expect(steps.filter((s) => s.outcome === 'completed')).toHaveLength(30);
    for (const { formSubmissionId } of submissions) {
      expect(await enrichmentEvents(t.database, formSubmissionId)).toHaveLength(1);
    }
    // Five domains, two tenants: one account per (tenant, domain), however the jobs interleaved.
    const accounts = await t.database.kysely
      .selectFrom('accounts')
      .select(['tenant_id', 'domain'])
      .where('domain', 'like', 'race%')
      .execute();
    expect(accounts).toHaveLength(10);
  });
});

describe('the worker', () => {
  it('is registered by the module, wakes on ENRICHMENT_CHANNEL and finishes queued jobs', async () => {
    const [worker] = enrichmentModule.workers!({
      database: t.database,
      config: testConfig(t.database.env),
      clock: t.clock,
      logger: pino({ level: 'silent' }),
    });
    expect(worker!.channels).toEqual([ENRICHMENT_CHANNEL]);
    worker!.start();
    try {
      const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'woken@wake-corp.example');
      worker!.wake();
      for (let i = 0; i < 200 && (await enrichmentEvents(t.database, formSubmissionId)).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect((await enrichmentEvents(t.database, formSubmissionId)).map((e) => e.type)).toEqual(['form.enriched']);
    } finally {
      await worker!.stop();
    }
  });
});
