import { describe, expect, it } from 'vitest';
import { useTestApp, type Tenant } from '../../../test/harness.js';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';

/**
 * Search is case-insensitive for every letter, not only ASCII, on both engines: 1–2 character
 * queries (which cannot use the trigram index) included.
 */
const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

async function names(tenant: Tenant, url: string, field: string): Promise<string[]> {
  const res = await t.request(tenant, { method: 'GET', url });
  expect(res.statusCode, url).toBe(200);
  return (res.json() as { items: Record<string, string>[] }).items.map((i) => i[field]!).sort();
}

describe('case-insensitive search beyond ASCII', () => {
  it('finds É for é, Ö for ö (and back) with queries of 1, 2 and 3+ characters', async () => {
    await makePerson(alice.scope, t.clock, { name: 'Élodie Øster' });
    await makePerson(alice.scope, t.clock, { name: 'plain ascii' });
    await makePage(alice.scope, t.clock, { name: 'ÜBER UNS' });
    await makePage(alice.scope, t.clock, { name: 'other' });
    await t.request(alice, { method: 'POST', url: '/v0/accounts', payload: { domain: 'oel.example', name: 'ÖL AG' } });

    for (const query of ['é', 'É', 'él', 'ÉL', 'élo', 'ÉLO', 'ø', 'øs']) {
      expect(await names(alice, `/v0/persons/search?query=${encodeURIComponent(query)}`, 'name'), query).toEqual([
        'Élodie Øster',
      ]);
    }
    for (const query of ['ü', 'üb', 'übe', 'Ü']) {
      expect(await names(alice, `/v0/pages/search?query=${encodeURIComponent(query)}`, 'name'), query).toEqual([
        'ÜBER UNS',
      ]);
    }
    for (const query of ['ö', 'öl', 'öl ', 'Öl a']) {
      expect(await names(alice, `/v0/accounts/search?query=${encodeURIComponent(query)}`, 'name'), query).toEqual([
        'ÖL AG',
      ]);
    }
    // ASCII letters still fold both ways, and other text is matched literally
    expect(await names(alice, '/v0/persons/search?query=AS', 'name')).toEqual(['plain ascii']);
    expect(await names(alice, `/v0/persons/search?query=${encodeURIComponent('é%')}`, 'name')).toEqual([]);
  });
});
