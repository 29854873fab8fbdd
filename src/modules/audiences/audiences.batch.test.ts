import { describe, expect, it } from 'vitest';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const batch = (tenant: Tenant | null, pageId: string, items: unknown[]) =>
  t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/batch`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ items }),
  });

interface BatchItemResult {
  index: number;
  outcome: 'created' | 'existing' | 'error';
  audienceId: string | null;
  personId: string | null;
  accountId: string | null;
  audience: Record<string, unknown> | null;
  problem: { code: string; status: number; errors: { path: string }[] } | null;
}

const countAudiences = async (tenant: Tenant, pageId: string) =>
  (await t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences` })).json().totalCount as number;

describe('POST /v0/pages/{page_id}/audiences/batch (extension)', () => {
  it('creates, reuses and refuses item by item; re-sending creates nothing', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const items = [
      { person: { email: 'sam@globex.example', name: 'Sam Lee' }, account: { name: 'Globex' } },
      { account: { domain: 'https://www.initech.example/', name: 'Initech' }, supplementaryContext: 'Banks.' },
      { person: { email: 'not-an-email', name: 'Broken' } },
      { person: { email: 'SAM@globex.example' } }, // the same person as item 0
      { person: { name: 'Nobody' } },
      { customName: 'A segment' },
      { person: { email: 'kim@gmail.com', name: 'Kim' }, account: { domain: 'hooli.example', name: 'Hooli' } },
    ];
    const res = await batch(alice, pageId, items);
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      createdCount: number;
      existingCount: number;
      errorCount: number;
      items: BatchItemResult[];
    };
    expect(body.items.map((i) => i.outcome)).toEqual([
      'created',
      'created',
      'error',
      'existing',
      'error',
      'error',
      'created',
    ]);
    expect(body).toMatchObject({ pageId, createdCount: 3, existingCount: 1, errorCount: 3 });
    const [sam, initech, badEmail, samAgain, nameOnly, segment, kim] = body.items;
    expect(sam!.audience).toMatchObject({
      computedName: 'Sam Lee · Globex',
      status: 'queued', // its first generation is queued (createAudience)
      latestVersion: { versionNumber: 2, status: 'queued' },
      publishedVersion: { versionNumber: 1, status: 'published' },
    });
    expect(samAgain).toMatchObject({ audienceId: sam!.audienceId, personId: sam!.personId });
    expect(initech!.audience).toMatchObject({
      personId: null,
      computedName: 'Initech',
      supplementaryContext: 'Banks.',
    });
    expect(initech!.accountId).toEqual(expect.any(String));
    expect(badEmail!.problem).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(badEmail!.problem!.errors[0]!.path).toBe('/body/items/2/person/email');
    expect(nameOnly!.problem!.errors[0]!.path).toBe('/body/items/4/person');
    expect(segment!.problem!.errors[0]!.path).toBe('/body/items/5');
    // A free-mail person gets the row's company as their own domain (filled, never overwritten).
    expect(kim!.audience).toMatchObject({ computedName: 'Kim · Hooli' });
    const person = await t.request(alice, { method: 'GET', url: `/v0/persons/${kim!.personId}` });
    expect(person.json()).toMatchObject({ domain: 'hooli.example', email: 'kim@gmail.com' });

    // The refused items wrote nothing: no person "Broken" or "Nobody".
    const search = await t.request(alice, { method: 'GET', url: '/v0/persons/search?query=Broken' });
    expect(search.json().items).toEqual([]);

    // Re-sending answers every identity's audience as existing and writes nothing.
    const before = await rowCounts(alice);
    const again = (await batch(alice, pageId, items)).json() as { items: BatchItemResult[]; createdCount: number };
    expect(again.createdCount).toBe(0);
    expect(again.items.map((i) => i.outcome)).toEqual([
      'existing',
      'existing',
      'error',
      'existing',
      'error',
      'error',
      'existing',
    ]);
    expect(again.items[0]!.audienceId).toBe(sam!.audienceId);
    expect(await rowCounts(alice)).toEqual(before);
    expect(await countAudiences(alice, pageId)).toBe(3);
  });

  it('reuses the audience a person already has on the page, and takes ids like the create body', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const personId = await makePerson(alice.scope, t.clock, { name: 'Ada', email: 'ada@acme.example' });
    const first = (await batch(alice, pageId, [{ personId, personRouteKey: 'ada' }])).json();
    expect(first.items[0]).toMatchObject({ outcome: 'created', personId });
    expect(first.items[0].audience.personRouteKey).toBe('ada');
    const byEmail = (await batch(alice, pageId, [{ person: { email: 'ada@acme.example' } }])).json();
    expect(byEmail.items[0]).toMatchObject({ outcome: 'existing', audienceId: first.items[0].audienceId });
    // A route key another audience has is that item's 409; the others go on.
    const clash = (
      await batch(alice, pageId, [
        { person: { email: 'bo@acme.example' }, personRouteKey: 'ada' },
        { person: { email: 'cy@acme.example' } },
      ])
    ).json();
    expect(clash.items[0]).toMatchObject({ outcome: 'error', problem: { code: 'route_key_taken', status: 409 } });
    expect(clash.items[0].problem.errors[0].path).toBe('/body/items/0/personRouteKey');
    expect(clash.items[1].outcome).toBe('created');
    // Never half an item: bo, whose audience was refused, was not created either.
    const search = await t.request(alice, { method: 'GET', url: '/v0/persons/search?query=bo%40acme' });
    expect(search.json().items).toEqual([]);
    // Another tenant's person is a reference that does not exist.
    const bobs = await makePerson(bob.scope, t.clock);
    const foreign = (await batch(alice, pageId, [{ personId: bobs }])).json();
    expect(foreign.items[0].problem.errors[0].path).toBe('/body/items/0/personId');
    // An audience addresses one: a person and an accountId together are refused.
    const accountId = first.items[0].audience.accountId ?? 'account_00000000000000000000000000';
    const both = (await batch(alice, pageId, [{ person: { email: 'di@acme.example' }, accountId }])).json();
    expect(both.items[0].problem.errors[0].path).toBe('/body/items/0/accountId');
  });

  it('refuses more than 1,000 items, a malformed item, other tenants, archived pages and no key: nothing written', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const before = await rowCounts(alice);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ person: { email: `p${i}@acme.example` } }));
    const res = await batch(alice, pageId, tooMany);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors[0]!.path).toBe('/body/items');
    const empty = await batch(alice, pageId, []);
    expect(empty.statusCode).toBe(422);
    const malformed = await batch(alice, pageId, [{ person: { email: 'a@acme.example' } }, { person: { mail: 'x' } }]);
    expect(malformed.statusCode).toBe(422);
    expect(problem(malformed).errors[0]!.path).toContain('/body/items/1/person');
    expect((await batch(bob, pageId, [{ customName: 'x', person: { email: 'a@b.example' } }])).statusCode).toBe(404);
    expect(
      (await batch(alice, 'page_00000000000000000000000000', [{ person: { email: 'a@b.example' } }])).statusCode,
    ).toBe(404);
    expect((await batch(null, pageId, [{ person: { email: 'a@b.example' } }])).statusCode).toBe(401);
    expect(await rowCounts(alice)).toEqual(before);
    const archived = await makePage(alice.scope, t.clock, { status: 'archived' });
    const refused = await batch(alice, archived, [{ person: { email: 'a@b.example' } }]);
    expect(refused.statusCode).toBe(409);
    expect(problem(refused).code).toBe('page_archived');
  });

  it('takes exactly 1,000 items, answering each', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    // Mostly refused items (cheap), so that the test stays quick: the limit is what is tested.
    const items = Array.from({ length: 1000 }, (_, i) =>
      i % 250 === 0 ? { person: { email: `lead${i}@corp.example` } } : { person: { email: `not-an-email-${i}` } },
    );
    const res = await batch(alice, pageId, items);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ createdCount: 4, existingCount: 0, errorCount: 996 });
    expect(res.json().items).toHaveLength(1000);
    expect(res.json().items[999]).toMatchObject({ index: 999, outcome: 'error' });
    expect(await countAudiences(alice, pageId)).toBe(4);
  }, 60_000);
});
