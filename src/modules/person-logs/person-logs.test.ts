import { describe, expect, it } from 'vitest';
import { makePerson } from '../../../test/factories/persons.js';
import { ENGINE, problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { ensureAccount } from '../accounts/index.js';
import { patchPerson } from '../persons/index.js';
import { writePersonLog } from './person-logs.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const log = (tenant: Tenant, body: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/person_logs', payload: body as object });

const getPerson = async (tenant: Tenant, id: string) =>
  (await t.request(tenant, { method: 'GET', url: `/v0/persons/${id}` })).json();

describe('POST /v0/person_logs: person resolution', () => {
  it('creates a person from the given fields, then matches it by email case-insensitively', async () => {
    const tenant = await t.createTenant();
    const first = await log(tenant, {
      source: 'web-form',
      type: 'form-submitted',
      email: 'Jane.Doe@Acme.example',
      name: 'Jane Doe',
      payload: { form: 'pricing' },
    });
    expect(first.statusCode).toBe(201);
    const created = first.json();
    expect(created).toEqual({
      personId: expect.stringMatching(/^person_[a-z0-9]{26}$/),
      personLogId: expect.stringMatching(/^plog_[a-z0-9]{26}$/),
      createdAt: '2026-11-01T09:00:00.000Z',
      createdPerson: true,
      source: 'web-form',
      type: 'form-submitted',
    });
    expect(await getPerson(tenant, created.personId)).toMatchObject({
      name: 'Jane Doe',
      email: 'Jane.Doe@Acme.example',
      slug: 'jane-doe',
      domain: null,
      phoneNumber: null,
      socialProfileUrl: null,
    });

    const again = await log(tenant, { source: 'hubspot', email: 'jane.doe@ACME.EXAMPLE', payload: {} });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ personId: created.personId, createdPerson: false, type: 'webhook' });
    expect(await rowCounts(tenant)).toMatchObject({ persons: 1, person_logs: 2 });
  });

  it('matches by email first, then phone, then social profile URL (normalized)', async () => {
    const tenant = await t.createTenant();
    const byPhone = (await log(tenant, { source: 's', phoneNumber: '+14155550100', payload: {} })).json();
    const bySocial = (
      await log(tenant, { source: 's', socialProfileUrl: 'https://www.LinkedIn.com/in/JaneDoe/', payload: {} })
    ).json();
    const byEmail = (await log(tenant, { source: 's', email: 'x@corp.example', payload: {} })).json();

    const res = await log(tenant, {
      source: 's',
      email: 'X@corp.example',
      phoneNumber: '+14155550100',
      socialProfileUrl: 'linkedin.com/in/janedoe',
      payload: {},
    });
    expect(res.json().personId).toBe(byEmail.personId);
    const phoneThenSocial = await log(tenant, {
      source: 's',
      phoneNumber: '+14155550100',
      socialProfileUrl: 'http://linkedin.com/in/janedoe?utm=1',
      payload: {},
    });
    expect(phoneThenSocial.json().personId).toBe(byPhone.personId);
    const social = await log(tenant, { source: 's', socialProfileUrl: 'linkedin.com/in/JANEDOE#x', payload: {} });
    expect(social.json()).toMatchObject({ personId: bySocial.personId, createdPerson: false });
    // Identities held by other persons are never moved: the email person did not gain the phone.
    expect((await getPerson(tenant, byEmail.personId)).phoneNumber).toBeNull();
  });

  it('fills identities a matched person lacks, never overwrites them', async () => {
    const tenant = await t.createTenant();
    const p = (await log(tenant, { source: 's', email: 'fill@corp.example', name: 'Fill Me', payload: {} })).json();
    await log(tenant, {
      source: 's',
      email: 'fill@corp.example',
      name: 'Other Name',
      phoneNumber: '+4930123456',
      payload: {},
    });
    expect(await getPerson(tenant, p.personId)).toMatchObject({ name: 'Fill Me', phoneNumber: '+4930123456' });
    await log(tenant, { source: 's', email: 'fill@corp.example', phoneNumber: '+4930999999', payload: {} });
    expect((await getPerson(tenant, p.personId)).phoneNumber).toBe('+4930123456');
  });

  it('attaches to personId when given, and names the person when no name is given', async () => {
    const tenant = await t.createTenant();
    const p = (await log(tenant, { source: 's', email: 'only@corp.example', payload: {} })).json();
    expect(await getPerson(tenant, p.personId)).toMatchObject({ name: 'only@corp.example', slug: 'only' });
    const res = await log(tenant, { source: 's', personId: p.personId, payload: { a: 1 } });
    expect(res.json()).toMatchObject({ personId: p.personId, createdPerson: false });
  });

  it('gives persons of the same name distinct slugs', async () => {
    const tenant = await t.createTenant();
    const a = (await log(tenant, { source: 's', email: 'a@x.example', name: 'Sam Lee', payload: {} })).json();
    const b = (await log(tenant, { source: 's', email: 'b@x.example', name: 'Sam Lee', payload: {} })).json();
    const [pa, pb] = [await getPerson(tenant, a.personId), await getPerson(tenant, b.personId)];
    expect(pa.slug).toBe('sam-lee');
    expect(pb.slug).toMatch(/^sam-lee-[a-z0-9]+$/);
  });

  it('refuses another tenant’s personId (422 at /body/personId) and an unknown one, writing nothing', async () => {
    const bobs = (await log(bob, { source: 's', email: 'bob@bob.example', payload: {} })).json();
    for (const personId of [bobs.personId, 'person_01h0000000000000000000000']) {
      const before = await rowCounts(alice);
      const res = await log(alice, { source: 's', personId, payload: {}, idempotencyKey: `k-${personId}` });
      expect(res.statusCode).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('validation_failed');
      expect(body.errors).toEqual([{ path: '/body/personId', message: expect.any(String) }]);
      expect(await rowCounts(alice)).toEqual(before);
    }
  });

  it('refuses a request that identifies nobody', async () => {
    const before = await rowCounts(alice);
    for (const body of [
      { source: 's', payload: {} },
      { source: 's', name: 'Only A Name', payload: {} },
    ]) {
      const res = await log(alice, body);
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]?.path).toBe('/body');
    }
    expect(await rowCounts(alice)).toEqual(before);
  });
});

describe('POST /v0/person_logs: bad input', () => {
  const valid = { source: 'web-form', email: 'valid@corp.example', payload: {} };
  it.each([
    ['source Web_Form', { ...valid, source: 'Web_Form' }, '/body/source'],
    ['source empty', { ...valid, source: '' }, '/body/source'],
    ['source trailing dash', { ...valid, source: 'web-' }, '/body/source'],
    ['source 101 chars', { ...valid, source: 'a'.repeat(101) }, '/body/source'],
    ['type 101 chars', { ...valid, type: 'a'.repeat(101) }, '/body/type'],
    ['type with space', { ...valid, type: 'form submitted' }, '/body/type'],
    ['phone 0044…', { ...valid, phoneNumber: '00442071838750' }, '/body/phoneNumber'],
    ['phone +0…', { ...valid, phoneNumber: '+0442071838750' }, '/body/phoneNumber'],
    ['phone 16 digits', { ...valid, phoneNumber: '+1234567890123456' }, '/body/phoneNumber'],
    ['empty name', { ...valid, name: '' }, '/body/name'],
    ['256-character name', { ...valid, name: 'n'.repeat(256) }, '/body/name'],
    ['payload array', { ...valid, payload: [1, 2] }, '/body/payload'],
    ['payload string', { ...valid, payload: 'hello' }, '/body/payload'],
    ['payload null', { ...valid, payload: null }, '/body/payload'],
    ['payload missing', { source: 's', email: 'valid@corp.example' }, '/body/payload'],
    ['source missing', { email: 'valid@corp.example', payload: {} }, '/body/source'],
    ['payload over 64 KiB', { ...valid, payload: { big: 'x'.repeat(65 * 1024) } }, '/body/payload'],
    ['empty idempotencyKey', { ...valid, idempotencyKey: '' }, '/body/idempotencyKey'],
    ['256-char idempotencyKey', { ...valid, idempotencyKey: 'k'.repeat(256) }, '/body/idempotencyKey'],
    ['bad email', { ...valid, email: 'not-an-email' }, '/body/email'],
    ['empty personId', { ...valid, personId: '' }, '/body/personId'],
    ['empty socialProfileUrl', { ...valid, socialProfileUrl: '' }, '/body/socialProfileUrl'],
    ['socialProfileUrl not http', { ...valid, socialProfileUrl: 'ftp://x.example/a' }, '/body/socialProfileUrl'],
    ['unknown field', { ...valid, personID: 'x' }, '/body/personID'],
  ])('%s → 422 at its field, nothing written', async (_label, body, path) => {
    const before = await rowCounts(alice);
    const res = await log(alice, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors.map((e) => e.path)).toContain(path);
    expect(await rowCounts(alice)).toEqual(before);
  });
});

describe('POST /v0/person_logs: idempotencyKey', () => {
  it('replays the original result for the same key and body, writing nothing', async () => {
    const tenant = await t.createTenant();
    const body = { source: 'crm', email: 'idem@corp.example', payload: { n: 1 }, idempotencyKey: 'evt-1' };
    const first = await log(tenant, body);
    expect(first.statusCode).toBe(201);
    const before = await rowCounts(tenant);
    t.clock.advance(60_000);
    const repeat = await log(tenant, { ...body, payload: { n: 1 } });
    expect(repeat.statusCode).toBe(201);
    expect(repeat.json()).toEqual(first.json());
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(await rowCounts(tenant)).toEqual(before);
  });

  it('refuses the same key with another body (422 idempotency_key_reused), writing nothing', async () => {
    const tenant = await t.createTenant();
    await log(tenant, { source: 'crm', email: 'k@corp.example', payload: { n: 1 }, idempotencyKey: 'evt-2' });
    const before = await rowCounts(tenant);
    const res = await log(tenant, {
      source: 'crm',
      email: 'other@corp.example',
      payload: { n: 2 },
      idempotencyKey: 'evt-2',
    });
    expect(res.statusCode).toBe(422);
    expect(problem(res).code).toBe('idempotency_key_reused');
    expect(await rowCounts(tenant)).toEqual(before);
  });

  it('keys are per tenant', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const body = { source: 'crm', email: 'same@corp.example', payload: {}, idempotencyKey: 'shared' };
    const ra = (await log(a, body)).json();
    const rb = (await log(b, body)).json();
    expect(ra.personLogId).not.toBe(rb.personLogId);
  });

  it('concurrent repeats produce exactly one entry and every caller gets its result', async () => {
    const tenant = await t.createTenant();
    const body = { source: 'crm', email: 'burst@corp.example', payload: { x: 1 }, idempotencyKey: 'evt-burst' };
    const results = await Promise.all(Array.from({ length: 25 }, () => log(tenant, body)));
    const ok = results.filter((r) => r.statusCode === 201).map((r) => r.json());
    const retry = results.filter((r) => r.statusCode === 409);
    for (const r of retry) expect(problem(r).code).toBe('idempotency_request_in_progress');
    expect(ok.length + retry.length).toBe(25);
    expect(new Set(ok.map((r) => r.personLogId)).size).toBe(1);
    expect(await rowCounts(tenant)).toMatchObject({ persons: 1, person_logs: 1 });
  });
});

describe('POST /v0/person_logs: concurrency', () => {
  it('many concurrent writes for the same new email create exactly one person', async () => {
    const tenant = await t.createTenant();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        log(tenant, { source: 'burst', email: `new.person@corp.example`, name: `Name ${i % 3}`, payload: { i } }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(40).fill(201));
    const bodies = results.map((r) => r.json());
    expect(new Set(bodies.map((b) => b.personId)).size).toBe(1);
    expect(bodies.filter((b) => b.createdPerson)).toHaveLength(1);
    expect(await rowCounts(tenant)).toMatchObject({ persons: 1, person_logs: 40 });
  });

  it('concurrent writes for distinct new persons of the same name all succeed with unique slugs', async () => {
    const tenant = await t.createTenant();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        log(tenant, { source: 'burst', email: `p${i}@corp.example`, name: 'Same Name', payload: {} }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(30).fill(201));
    const slugs = await Promise.all(results.map(async (r) => (await getPerson(tenant, r.json().personId)).slug));
    expect(new Set(slugs).size).toBe(30);
  });
});

describe('POST /v0/person_logs: account activity under a concurrent change of the person', () => {
  // SQLite serializes writers: the race below exists where transactions run side by side.
  it.runIf(ENGINE === 'postgres')(
    'credits the account the person is linked to when the entry commits, not the one read before (issue 26)',
    async () => {
      const tenant = await t.createTenant();
      const personId = await makePerson(tenant.scope, t.clock, { email: 'sam@old-corp.example' });
      const firstEntryAt = t.clock.now().toISOString();
      await tenant.scope.transaction(async (tx) => {
        await ensureAccount(tx, t.clock, 'old-corp.example', 'Old');
        await ensureAccount(tx, t.clock, 'new-corp.example', 'New');
      });
      t.clock.advance(60_000);
      let logged: Promise<unknown> | undefined;
      // A PATCH {domain} holds the person's row while the entry is written beside it.
      await tenant.scope.transaction(async (tx) => {
        await patchPerson(tx, t.clock, personId, { domain: 'new-corp.example' });
        t.clock.advance(60_000);
        logged = writePersonLog(tenant.scope, t.clock, {
          source: 'crm',
          type: 'call',
          payload: {},
          personId,
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      const { body } = (await logged) as { body: { createdAt: string } };
      const accounts = await t.database.kysely
        .selectFrom('accounts')
        .select(['domain', 'latest_activity_at'])
        .where('tenant_id', '=', tenant.tenantId)
        .orderBy('domain')
        .execute();
      expect(accounts).toEqual([
        { domain: 'new-corp.example', latest_activity_at: body.createdAt },
        // The person's history came along to the new account; the old one keeps what it had.
        { domain: 'old-corp.example', latest_activity_at: firstEntryAt },
      ]);
    },
  );
});

describe('GET /v0/persons/{person_id}/logs (extension)', () => {
  const list = (tenant: Tenant | null, personId: string, query = '') =>
    t.request(tenant, { method: 'GET', url: `/v0/persons/${personId}/logs${query}` });

  it('lists what endpoint 11 wrote, newest first, filtered by source and type, page by page', async () => {
    const tenant = await t.createTenant();
    const written: string[] = [];
    const entries = [
      { source: 'hubspot', type: 'page-viewed' },
      { source: 'web-form', type: 'form-submitted' },
      { source: 'hubspot', type: 'email-opened' },
      { source: 'hubspot', type: 'page-viewed' },
      { source: 'calendly', type: 'meeting-booked' },
    ];
    for (const [i, e] of entries.entries()) {
      const res = await log(tenant, { ...e, email: 'timeline@corp.example', payload: { i } });
      written.push(res.json().personLogId);
      // Two entries share a timestamp: the id breaks the tie.
      if (i !== 1) t.clock.advance(1000);
    }
    const personId = (await log(tenant, { source: 'x', email: 'timeline@corp.example', payload: {} })).json().personId;
    const other = (await log(tenant, { source: 'hubspot', email: 'someone@corp.example', payload: {} })).json();

    const all = await list(tenant, personId, '?limit=100');
    expect(all.statusCode).toBe(200);
    const body = all.json();
    expect(body.totalCount).toBe(6);
    expect(body.items.map((e: { personLogId: string }) => e.personLogId).slice(1)).toEqual([...written].reverse());
    expect(body.items[1]).toEqual({
      personLogId: written[4],
      personId,
      source: 'calendly',
      type: 'meeting-booked',
      payload: { i: 4 },
      createdAt: expect.any(String),
    });
    expect(body.items.map((e: { personLogId: string }) => e.personLogId)).not.toContain(other.personLogId);

    const hubspot = (await list(tenant, personId, '?source=hubspot')).json();
    expect(hubspot.totalCount).toBe(3);
    expect(hubspot.items.map((e: { personLogId: string }) => e.personLogId)).toEqual([
      written[3],
      written[2],
      written[0],
    ]);
    const views = (await list(tenant, personId, '?source=hubspot&type=page-viewed')).json();
    expect(views.items.map((e: { personLogId: string }) => e.personLogId)).toEqual([written[3], written[0]]);
    expect((await list(tenant, personId, '?type=nothing-like-it')).json()).toEqual({
      hasMore: false,
      items: [],
      nextCursor: null,
      totalCount: 0,
    });

    // Walking two at a time yields every entry once, in order, also across the tie.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { personLogId: string }[]; nextCursor: string | null } = (
        await list(tenant, personId, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...page.items.map((e: { personLogId: string }) => e.personLogId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(body.items.map((e: { personLogId: string }) => e.personLogId));

    // A cursor is bound to its filters.
    const first = (await list(tenant, personId, '?limit=1&source=hubspot')).json();
    const reused = await list(tenant, personId, `?limit=1&source=web-form&cursor=${first.nextCursor}`);
    expect(reused.statusCode).toBe(400);
    expect(problem(reused).code).toBe('invalid_cursor');
  });

  it('404 for an unknown or another tenant’s person, 401 without a key, 422 for a bad filter', async () => {
    const bobs = (await log(bob, { source: 's', email: 'bob.timeline@bob.example', payload: {} })).json();
    for (const id of [bobs.personId, 'person_01h0000000000000000000000']) {
      const res = await list(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect((await list(null, bobs.personId)).statusCode).toBe(401);
    for (const [query, path] of [
      ['?source=Web_Form', '/query/source'],
      ['?type=', '/query/type'],
      ['?limit=0', '/query/limit'],
      ['?personId=x', '/query/personId'],
    ]) {
      const res = await list(bob, bobs.personId, query);
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors.map((e) => e.path)).toContain(path);
    }
  });
});
