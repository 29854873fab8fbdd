import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ENGINE, problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { substringMatch } from '../../db/dialect.js';
import { makePerson } from '../../../test/factories/persons.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const get = (tenant: Tenant, id: string) => t.request(tenant, { method: 'GET', url: `/v0/persons/${id}` });
const patch = (tenant: Tenant, id: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url: `/v0/persons/${id}`, payload: body as object });
const search = (tenant: Tenant, qs: string) => t.request(tenant, { method: 'GET', url: `/v0/persons/search?${qs}` });

describe('GET /v0/persons/{id}', () => {
  it('returns the person with every field', async () => {
    const id = await makePerson(alice.scope, t.clock, {
      name: 'Get Me',
      email: 'get.me@corp.example',
      phoneNumber: '+15550001',
    });
    const res = await get(alice, id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      personId: id,
      name: 'Get Me',
      email: 'get.me@corp.example',
      domain: null,
      slug: 'get-me',
      phoneNumber: '+15550001',
      socialProfileUrl: null,
      createdAt: '2026-11-01T09:00:00.000Z',
      updatedAt: '2026-11-01T09:00:00.000Z',
    });
  });

  it('is 404 for unknown, malformed and other tenants’ ids', async () => {
    const bobs = await makePerson(bob.scope, t.clock);
    for (const id of [bobs, 'person_01h0000000000000000000000', 'nonsense']) {
      const res = await get(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });
});

describe('PATCH /v0/persons/{id}', () => {
  it('changes given fields, clears nulls, keeps the slug, canonicalizes the domain', async () => {
    const id = await makePerson(alice.scope, t.clock, { name: 'Patch Me', email: 'patch@corp.example' });
    t.clock.advance(1000);
    const res = await patch(alice, id, {
      name: 'Patched Name',
      email: 'Patched@Other.example',
      domain: 'https://www.Other.example/team',
      phoneNumber: '+442071838750',
      socialProfileUrl: 'https://linkedin.com/in/patched',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      personId: id,
      name: 'Patched Name',
      email: 'Patched@Other.example',
      domain: 'other.example',
      slug: 'patch-me',
      phoneNumber: '+442071838750',
      socialProfileUrl: 'https://linkedin.com/in/patched',
      updatedAt: '2026-11-01T09:00:01.000Z',
    });
    const cleared = await patch(alice, id, { email: null, domain: null, phoneNumber: null, socialProfileUrl: null });
    expect(cleared.json()).toMatchObject({ email: null, domain: null, phoneNumber: null, socialProfileUrl: null });
    expect((await get(alice, id)).json()).toEqual(cleared.json());
  });

  it('an empty body changes nothing and keeps updatedAt', async () => {
    const id = await makePerson(alice.scope, t.clock);
    const before = (await get(alice, id)).json();
    t.clock.advance(1000);
    const res = await patch(alice, id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(before);
  });

  it('refuses an email, phone or profile another person holds (409 person_identity_taken)', async () => {
    const holder = await makePerson(alice.scope, t.clock, {
      email: 'holder@corp.example',
      phoneNumber: '+15550999',
      socialProfileUrl: 'https://x.com/holder',
    });
    const other = await makePerson(alice.scope, t.clock);
    for (const [field, value] of [
      ['email', 'HOLDER@corp.example'],
      ['phoneNumber', '+15550999'],
      ['socialProfileUrl', 'https://www.x.com/Holder/'],
    ] as const) {
      const res = await patch(alice, other, { [field]: value });
      expect(res.statusCode, field).toBe(409);
      expect(problem(res)).toMatchObject({ code: 'person_identity_taken', personId: holder, field });
    }
    // Its own identity is no conflict.
    expect((await patch(alice, holder, { email: 'Holder@corp.example' })).statusCode).toBe(200);
  });

  it.each([
    ['empty name', { name: '' }, '/body/name'],
    ['256-character name', { name: 'n'.repeat(256) }, '/body/name'],
    ['phone 0044…', { phoneNumber: '00442071838750' }, '/body/phoneNumber'],
    ['phone +0…', { phoneNumber: '+0123' }, '/body/phoneNumber'],
    ['phone 16 digits', { phoneNumber: '+1234567890123456' }, '/body/phoneNumber'],
    ['phone with spaces', { phoneNumber: '+44 20 7183 8750' }, '/body/phoneNumber'],
    ['empty domain', { domain: '' }, '/body/domain'],
    ['domain localhost', { domain: 'localhost' }, '/body/domain'],
    ['domain ..com', { domain: '..com' }, '/body/domain'],
    ['bad email', { email: 'nope' }, '/body/email'],
    ['numeric email', { email: 42 }, '/body/email'],
    ['empty socialProfileUrl', { socialProfileUrl: '' }, '/body/socialProfileUrl'],
    ['name null', { name: null }, '/body/name'],
    ['unknown field', { slug: 'mine' }, '/body/slug'],
  ])('%s → 422 at its field, nothing changed', async (_label, body, path) => {
    const id = await makePerson(alice.scope, t.clock, { name: 'Unchanged' });
    const before = (await get(alice, id)).json();
    const res = await patch(alice, id, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors.map((e) => e.path)).toContain(path);
    expect((await get(alice, id)).json()).toEqual(before);
  });

  it('concurrent PATCHes giving one email to many persons: one wins, the others get person_identity_taken', async () => {
    for (const [field, value] of [
      ['email', 'contested@corp.example'],
      ['phoneNumber', '+15550777'],
      ['socialProfileUrl', 'https://x.com/contested'],
    ] as const) {
      const persons = await Promise.all(Array.from({ length: 12 }, () => makePerson(alice.scope, t.clock)));
      const results = await Promise.all(persons.map((id) => patch(alice, id, { [field]: value })));
      const won = results.filter((r) => r.statusCode === 200);
      expect(won, field).toHaveLength(1);
      const holder = won[0]!.json().personId;
      for (const res of results.filter((r) => r.statusCode !== 200)) {
        expect(res.statusCode, field).toBe(409);
        expect(problem(res)).toMatchObject({ code: 'person_identity_taken', personId: holder, field });
      }
    }
  });

  it('is 404 for another tenant’s person and changes nothing', async () => {
    const bobs = await makePerson(bob.scope, t.clock, { name: 'Bob Person' });
    const res = await patch(alice, bobs, { name: 'Hijacked' });
    expect(res.statusCode).toBe(404);
    expect((await get(bob, bobs)).json().name).toBe('Bob Person');
  });
});

describe('GET /v0/persons/search', () => {
  it('matches name, email, domain and phone, case-insensitively, only in the tenant', async () => {
    const tenant = await t.createTenant();
    const byName = await makePerson(tenant.scope, t.clock, { name: 'Zebulon Quark', email: 'zq@one.example' });
    const byEmail = await makePerson(tenant.scope, t.clock, { name: 'Someone', email: 'QUARKY@two.example' });
    const byDomain = await makePerson(tenant.scope, t.clock, { name: 'Other', email: 'o@three.example' });
    await patch(tenant, byDomain, { domain: 'quarkindustries.example' });
    const byPhone = await makePerson(tenant.scope, t.clock, {
      name: 'Phone',
      phoneNumber: '+4915112345678',
      email: 'ph@x.example',
    });
    await makePerson(tenant.scope, t.clock, { name: 'Nobody', email: 'nobody@four.example' });
    await makePerson(bob.scope, t.clock, { name: 'Quark of Bob' });

    const res = await search(tenant, 'query=quark');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((p: { personId: string }) => p.personId)).toEqual([byDomain, byEmail, byName]);
    expect(body).toMatchObject({ hasMore: false, nextCursor: null, totalCount: null });
    expect(body.items[0]).toHaveProperty('slug');

    expect((await search(tenant, 'query=5112345')).json().items[0].personId).toBe(byPhone);
    expect((await search(tenant, 'query=Q')).json().items.length).toBeGreaterThanOrEqual(3);
  });

  it('pages with cursors without repeats', async () => {
    const tenant = await t.createTenant();
    for (let i = 0; i < 7; i++) await makePerson(tenant.scope, t.clock, { name: `Pager Person ${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await search(tenant, `query=pager&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      const body = res.json();
      seen.push(...body.items.map((p: { personId: string }) => p.personId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it.each([
    ['', 'query'],
    ['query=', 'query'],
    [`query=${'q'.repeat(201)}`, 'query'],
    ['query=a&limit=0', 'limit'],
    ['query=a&extra=1', 'extra'],
  ])('rejects %j with 422', async (qs, field) => {
    const res = await search(alice, qs);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(`/query/${field}`);
  });

  it('a search cursor from another query is refused', async () => {
    const tenant = await t.createTenant();
    for (let i = 0; i < 3; i++) await makePerson(tenant.scope, t.clock, { name: `Cursor ${i}` });
    const cursor = (await search(tenant, 'query=cursor&limit=1')).json().nextCursor;
    expect((await search(tenant, `query=other&cursor=${cursor}`)).statusCode).toBe(400);
  });

  it.runIf(ENGINE === 'sqlite')('looks up the matching rows instead of walking the tenant (query plan)', async () => {
    const plan = async (text: string) => {
      const query = alice.scope
        .searchFrom('persons', text)
        .select('persons.id')
        .where(substringMatch('sqlite', 'persons', ['name', 'email', 'domain', 'phone_number'], text))
        .orderBy('persons.id', 'desc')
        .limit(21)
        .compile();
      const explained = await sql
        .raw(`explain query plan ${query.sql.replace(/\?/g, "'x'")}`)
        .execute(t.database.kysely);
      return (explained.rows as { detail: string }[]).map((r) => r.detail).join(' | ');
    };
    const trigram = await plan('quark');
    expect(trigram).toContain('USING INTEGER PRIMARY KEY');
    expect(trigram).not.toContain('persons_tenant');
    // Too short for trigrams: a LIKE scan of the tenant's own rows, through its index.
    expect(await plan('q')).toContain('persons_tenant');
  });

  it('nothing written by reads', async () => {
    const before = await rowCounts(alice);
    await search(alice, 'query=anything');
    expect(await rowCounts(alice)).toEqual(before);
  });
});
