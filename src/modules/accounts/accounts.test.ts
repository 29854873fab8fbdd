import { describe, expect, it } from 'vitest';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { makePerson } from '../../../test/factories/persons.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const create = (tenant: Tenant, body: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/accounts', payload: body as object });
const get = (tenant: Tenant, id: string) => t.request(tenant, { method: 'GET', url: `/v0/accounts/${id}` });
const list = (tenant: Tenant, qs = '') => t.request(tenant, { method: 'GET', url: `/v0/accounts?${qs}` });
const search = (tenant: Tenant, qs: string) => t.request(tenant, { method: 'GET', url: `/v0/accounts/search?${qs}` });
const patchPerson = (tenant: Tenant, id: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url: `/v0/persons/${id}`, payload: body as object });
const log = (tenant: Tenant, body: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/person_logs', payload: body as object });

describe('POST /v0/accounts', () => {
  it('creates an account with a canonical domain (201)', async () => {
    const tenant = await t.createTenant();
    const res = await create(tenant, { domain: 'https://www.Acme.example:443/about', name: 'Acme' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      accountId: expect.stringMatching(/^account_[a-z0-9]{26}$/),
      domain: 'acme.example',
      name: 'Acme',
      createdAt: '2026-11-01T09:00:00.000Z',
      updatedAt: '2026-11-01T09:00:00.000Z',
      latestActivityAt: null,
      linkedPersons: [],
      linkedPersonsCount: 0,
    });
    const idn = await create(tenant, { domain: 'MÜNCHEN.de.' });
    expect(idn.json()).toMatchObject({ domain: 'xn--mnchen-3ya.de', name: null });
  });

  it('refuses the same company in another spelling: 409 account_exists naming the account', async () => {
    const tenant = await t.createTenant();
    const first = (await create(tenant, { domain: 'globex.example' })).json();
    for (const spelling of ['GLOBEX.example', 'http://www.globex.example/x', 'globex.example.']) {
      const before = await rowCounts(tenant);
      const res = await create(tenant, { domain: spelling, name: 'Dup' });
      expect(res.statusCode).toBe(409);
      expect(problem(res)).toMatchObject({ code: 'account_exists', accountId: first.accountId });
      expect(await rowCounts(tenant)).toEqual(before);
    }
    // Another tenant may have the same domain.
    expect((await create(bob, { domain: 'globex.example' })).statusCode).toBe(201);
  });

  it('concurrent creates of one domain make one account', async () => {
    const tenant = await t.createTenant();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create(tenant, { domain: i % 2 ? 'race.example' : 'WWW.RACE.example' })),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(19);
    expect((await rowCounts(tenant)).accounts).toBe(1);
  });

  it.each([
    ['http://'],
    ['localhost'],
    ['..com'],
    ['exa mple.com'],
    [`${'a'.repeat(300)}.com`],
    ['xn--zz.com'],
    ['xn--.example'],
    ['127.0.0.1'],
    ['[::1]'],
    ['single'],
    ['ftp://example.com'],
    ['under_score.com'],
  ])('domain %j → 422 at /body/domain, nothing written', async (domain) => {
    const before = await rowCounts(alice);
    const res = await create(alice, { domain });
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors[0]?.path).toBe('/body/domain');
    expect(await rowCounts(alice)).toEqual(before);
  });

  it.each([
    [{ domain: '' }, '/body/domain'],
    [{}, '/body/domain'],
    [{ domain: 42 }, '/body/domain'],
    [{ domain: 'ok.example', name: '' }, '/body/name'],
    [{ domain: 'ok.example', name: 'n'.repeat(256) }, '/body/name'],
    [{ domain: 'ok.example', name: null }, '/body/name'],
    [{ domain: 'ok.example', accountId: 'account_x' }, '/body/accountId'],
  ])('%j → 422 at %s, nothing written', async (body, path) => {
    const before = await rowCounts(alice);
    const res = await create(alice, body);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(path);
    expect(await rowCounts(alice)).toEqual(before);
  });
});

describe('linking persons to accounts', () => {
  it('links by person domain, else by work email; free mail never links; counts follow patches', async () => {
    const tenant = await t.createTenant();
    const account = (await create(tenant, { domain: 'initech.example', name: 'Initech' })).json();
    const byEmail = await makePerson(tenant.scope, t.clock, { email: 'peter@INITECH.example', name: 'Peter' });
    const freeMail = await makePerson(tenant.scope, t.clock, { email: 'milton@gmail.com', name: 'Milton' });
    const other = await makePerson(tenant.scope, t.clock, { email: 'bill@elsewhere.example', name: 'Bill' });

    const count = async () => {
      const body = (await get(tenant, account.accountId)).json();
      const listed = (await list(tenant))
        .json()
        .items.find((a: { accountId: string }) => a.accountId === account.accountId);
      expect(listed.linkedPersonsCount).toBe(body.linkedPersonsCount);
      expect(body.linkedPersons).toHaveLength(body.linkedPersonsCount);
      return body.linkedPersons.map((p: { personId: string }) => p.personId).sort();
    };
    expect(await count()).toEqual([byEmail]);

    // A free-mail person joins by setting a domain; a person's own domain beats its email's.
    await patchPerson(tenant, freeMail, { domain: 'www.initech.example' });
    await patchPerson(tenant, other, { domain: 'initech.example' });
    expect(await count()).toEqual([byEmail, freeMail, other].sort());
    await patchPerson(tenant, byEmail, { domain: 'elsewhere.example' });
    expect(await count()).toEqual([freeMail, other].sort());
    await patchPerson(tenant, byEmail, { domain: null });
    expect(await count()).toEqual([byEmail, freeMail, other].sort());
    await patchPerson(tenant, byEmail, { email: 'peter@gmail.com' });
    expect(await count()).toEqual([freeMail, other].sort());
  });

  it('persons existing before the account are linked when it is created, with their latest activity', async () => {
    const tenant = await t.createTenant();
    await makePerson(tenant.scope, t.clock, { email: 'early@hooli.example' });
    t.clock.advance(5000);
    const res = (await create(tenant, { domain: 'hooli.example' })).json();
    expect(res.linkedPersonsCount).toBe(1);
    expect(res.latestActivityAt).toBe('2026-11-01T09:00:00.000Z');
  });

  it('writing a log moves latestActivityAt of the person’s account forward', async () => {
    const tenant = await t.createTenant();
    const account = (await create(tenant, { domain: 'vandelay.example' })).json();
    expect(account.latestActivityAt).toBeNull();
    t.clock.set('2026-11-02T10:00:00.000Z');
    await log(tenant, { source: 's', email: 'art@vandelay.example', payload: {} });
    expect((await get(tenant, account.accountId)).json().latestActivityAt).toBe('2026-11-02T10:00:00.000Z');
    t.clock.set('2026-11-03T10:00:00.000Z');
    await log(tenant, { source: 's', email: 'art@vandelay.example', payload: {} });
    const after = (await get(tenant, account.accountId)).json();
    expect(after.latestActivityAt).toBe('2026-11-03T10:00:00.000Z');
    const listed = (await list(tenant)).json().items[0];
    expect(listed.latestActivityAt).toBe('2026-11-03T10:00:00.000Z');

    // Moving a person with history to another account brings the history along.
    const other = (await create(tenant, { domain: 'kramerica.example' })).json();
    const person = (await log(tenant, { source: 's', email: 'art@vandelay.example', payload: {} })).json().personId;
    await patchPerson(tenant, person, { domain: 'kramerica.example' });
    expect((await get(tenant, other.accountId)).json().latestActivityAt).toBe('2026-11-03T10:00:00.000Z');
  });

  it('caps linkedPersons at 100, newest first, while linkedPersonsCount is exact', async () => {
    const tenant = await t.createTenant();
    const account = (await create(tenant, { domain: 'big.example' })).json();
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) ids.push(await makePerson(tenant.scope, t.clock, { email: `p${i}@big.example` }));
    const body = (await get(tenant, account.accountId)).json();
    expect(body.linkedPersonsCount).toBe(105);
    expect(body.linkedPersons).toHaveLength(100);
    expect(body.linkedPersons[0].personId).toBe(ids[104]);
  });
});

describe('GET /v0/accounts and /v0/accounts/search', () => {
  it('lists newest first with counts; includeEmptyOnly=true lists only accounts without persons', async () => {
    const tenant = await t.createTenant();
    const a = (await create(tenant, { domain: 'a-corp.example', name: 'A Corp' })).json();
    const b = (await create(tenant, { domain: 'b-corp.example', name: 'B Corp' })).json();
    const c = (await create(tenant, { domain: 'c-corp.example', name: 'C Corp' })).json();
    await makePerson(tenant.scope, t.clock, { email: 'x@b-corp.example' });
    await makePerson(tenant.scope, t.clock, { email: 'y@b-corp.example' });

    const all = (await list(tenant)).json();
    expect(all.items.map((i: { accountId: string }) => i.accountId)).toEqual([c.accountId, b.accountId, a.accountId]);
    expect(all.totalCount).toBe(3);
    expect(all.items[1]).toEqual({
      accountId: b.accountId,
      domain: 'b-corp.example',
      name: 'B Corp',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      latestActivityAt: expect.any(String),
      linkedPersonsCount: 2,
    });
    const empty = (await list(tenant, 'includeEmptyOnly=true')).json();
    expect(empty.items.map((i: { accountId: string }) => i.accountId)).toEqual([c.accountId, a.accountId]);
    expect(empty.totalCount).toBe(2);
    expect((await list(tenant, 'includeEmptyOnly=false')).json().totalCount).toBe(3);

    const found = (await search(tenant, 'query=CORP.EX&includeEmptyOnly=true')).json();
    expect(found.items.map((i: { accountId: string }) => i.accountId)).toEqual([c.accountId, a.accountId]);
    expect(found.totalCount).toBe(2);
    const byName = (await search(tenant, 'query=b%20corp')).json();
    expect(byName.items.map((i: { accountId: string }) => i.accountId)).toEqual([b.accountId]);
    expect(byName.totalCount).toBe(1);
    expect((await search(bob, 'query=corp')).json().items).toEqual([]);
  });

  it('pages with cursors bound to the filter', async () => {
    const tenant = await t.createTenant();
    for (let i = 0; i < 5; i++) await create(tenant, { domain: `page${i}.example` });
    const first = (await list(tenant, 'limit=2')).json();
    expect(first).toMatchObject({ hasMore: true, totalCount: 5 });
    const second = (await list(tenant, `limit=2&cursor=${first.nextCursor}`)).json();
    expect(second.items).toHaveLength(2);
    expect((await list(tenant, `limit=2&includeEmptyOnly=true&cursor=${first.nextCursor}`)).statusCode).toBe(400);
  });

  it.each([
    ['/v0/accounts?includeEmptyOnly=maybe', '/query/includeEmptyOnly'],
    ['/v0/accounts?includeEmptyOnly=1', '/query/includeEmptyOnly'],
    ['/v0/accounts?includeEmptyOnly=', '/query/includeEmptyOnly'],
    ['/v0/accounts/search?query=x&includeEmptyOnly=maybe', '/query/includeEmptyOnly'],
    ['/v0/accounts/search', '/query/query'],
    ['/v0/accounts?limit=101', '/query/limit'],
  ])('%s → 422 at %s', async (url, path) => {
    const res = await t.request(alice, { method: 'GET', url });
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(path);
  });
});

describe('GET /v0/accounts/{id}', () => {
  it('is 404 for unknown, malformed and other tenants’ ids', async () => {
    const bobs = (await create(bob, { domain: 'bobs-only.example' })).json();
    for (const id of [bobs.accountId, 'account_01h0000000000000000000000', 'x']) {
      const res = await get(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });

  it('never shows another tenant’s persons', async () => {
    const mine = (await create(alice, { domain: 'shared-domain.example' })).json();
    await makePerson(bob.scope, t.clock, { email: 'someone@shared-domain.example' });
    expect((await get(alice, mine.accountId)).json()).toMatchObject({ linkedPersons: [], linkedPersonsCount: 0 });
  });
});

describe('concurrent changes of a person’s domain and email', () => {
  const ROUNDS = 24;

  /** The persons counted under the account of `domain`, by id. */
  const countedUnder = async (tenant: Tenant, accountId: string) =>
    (await get(tenant, accountId))
      .json()
      .linkedPersons.map((p: { personId: string }) => p.personId)
      .sort();

  it('PATCH {domain} racing PATCH {email}: the person ends under the account of its final domain', async () => {
    const tenant = await t.createTenant();
    const final = (await create(tenant, { domain: 'final.example' })).json();
    const mail = (await create(tenant, { domain: 'mail.example' })).json();
    const persons = await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) => makePerson(tenant.scope, t.clock, { email: `p${i}@old.example` })),
    );
    const results = await Promise.all(
      persons.flatMap((id, i) => [
        patchPerson(tenant, id, { domain: 'final.example' }),
        patchPerson(tenant, id, { email: `p${i}@mail.example` }),
      ]),
    );
    expect(results.map((r) => r.statusCode)).toEqual(results.map(() => 200));
    expect(await countedUnder(tenant, final.accountId)).toEqual([...persons].sort());
    expect(await countedUnder(tenant, mail.accountId)).toEqual([]);
  });

  it('PATCH {domain} racing a log entry that fills the email: the person ends under its domain’s account', async () => {
    const tenant = await t.createTenant();
    const final = (await create(tenant, { domain: 'final.example' })).json();
    const mail = (await create(tenant, { domain: 'mail.example' })).json();
    const persons = await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) =>
        makePerson(tenant.scope, t.clock, { email: undefined, phoneNumber: `+1555010${String(i).padStart(4, '0')}` }),
      ),
    );
    const results = await Promise.all(
      persons.flatMap((id, i) => [
        patchPerson(tenant, id, { domain: 'final.example' }),
        log(tenant, { source: 'crm', personId: id, email: `p${i}@mail.example`, payload: {} }),
      ]),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual(results.map((_, i) => (i % 2 ? 201 : 200)).sort());
    expect(await countedUnder(tenant, final.accountId)).toEqual([...persons].sort());
    expect(await countedUnder(tenant, mail.accountId)).toEqual([]);
    // the fill did happen: every person now has the email of its log entry
    const emails = await tenant.scope.selectFrom('persons').select('email').where('id', 'in', persons).execute();
    expect(emails.every((p) => p.email?.endsWith('@mail.example'))).toBe(true);
  });
});

describe('PATCH /v0/accounts/{id} (extension)', () => {
  const patch = (tenant: Tenant | null, id: string, body: unknown) =>
    t.request(tenant, { method: 'PATCH', url: `/v0/accounts/${id}`, payload: body as object });

  it('renames, clears and leaves alone; the new name is searchable at once', async () => {
    const tenant = await t.createTenant();
    await makePerson(tenant.scope, t.clock, { email: 'jo@renamed.example' });
    const account = (await create(tenant, { domain: 'renamed.example', name: 'Old Name' })).json();
    t.clock.advance(60_000);
    const renamed = await patch(tenant, account.accountId, { name: 'Zebracorp Holdings' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({
      accountId: account.accountId,
      domain: 'renamed.example',
      name: 'Zebracorp Holdings',
      createdAt: account.createdAt,
      linkedPersonsCount: 1,
    });
    expect(renamed.json().updatedAt).not.toBe(account.updatedAt);
    expect((await get(tenant, account.accountId)).json().name).toBe('Zebracorp Holdings');
    const found = (await search(tenant, 'query=zebracorp')).json();
    expect(found.items.map((a: { accountId: string }) => a.accountId)).toEqual([account.accountId]);
    expect((await search(tenant, 'query=old%20name')).json().items).toEqual([]);

    t.clock.advance(60_000);
    for (const body of [{}, { name: 'Zebracorp Holdings' }]) {
      const same = (await patch(tenant, account.accountId, body)).json();
      expect(same.updatedAt).toBe(renamed.json().updatedAt);
    }
    const cleared = await patch(tenant, account.accountId, { name: null });
    expect(cleared.json().name).toBeNull();
  });

  it('refuses bad bodies (422 at the field), other tenants’ and unknown ids (404), no key (401); nothing changes', async () => {
    const account = (await create(alice, { domain: 'patch-refusals.example', name: 'Kept' })).json();
    for (const [body, path] of [
      [{ name: '' }, '/body/name'],
      [{ name: 'n'.repeat(256) }, '/body/name'],
      [{ name: 42 }, '/body/name'],
      [{ domain: 'other.example' }, '/body/domain'],
    ] as const) {
      const before = await rowCounts(alice);
      const res = await patch(alice, account.accountId, body);
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors.map((e) => e.path)).toContain(path);
      expect(await rowCounts(alice)).toEqual(before);
    }
    for (const id of [account.accountId, 'account_00000000000000000000000000']) {
      const res = await patch(bob, id, { name: 'Stolen' });
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect((await patch(null, account.accountId, { name: 'Anon' })).statusCode).toBe(401);
    expect((await get(alice, account.accountId)).json()).toMatchObject({ name: 'Kept', updatedAt: account.updatedAt });
  });
});
