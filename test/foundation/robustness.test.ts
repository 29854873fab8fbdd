import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../harness.js';

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

/**
 * Every operation of the OpenAPI document, fed malformed input: none may answer 5xx, and every
 * refusal is a problem document. (Each resource's own tests check the exact codes.)
 */
let operations: { method: string; path: string; hasBody: boolean }[];

beforeAll(async () => {
  const doc = (await t.request(null, { method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, hasBody: !!op.requestBody })),
  );
});

const ids = [
  'x',
  'page_01h00000000000000000000000',
  '%00',
  '..%2F..%2Fetc',
  "'; drop table pages; --",
  'ü'.repeat(150),
];
const bodies: unknown[] = [
  {},
  [],
  'text',
  42,
  null,
  { unknown: true },
  { name: 'x'.repeat(100_000) },
  { constructor: { prototype: { polluted: true } } },
  { limit: -1, cursor: 5, url: 'javascript:alert(1)', events: 'all', payload: [], domain: 'localhost' },
  { name: 'nul\u0000here', title: '\u0000', source: 'a\u0000', domain: 'a\u0000.com', payload: { 'k\u0000': 1 } },
];
/** Texts JSON.stringify cannot produce: `__proto__` as an own key (an object literal would set the prototype). */
const rawBodies = ['{"__proto__":{"polluted":true}}', '{"a":{"__proto__":{"polluted":true}}}'];
const queries = ['limit=0', 'limit=abc', 'cursor=garbage', `query=${'q'.repeat(5000)}`, 'startDate=yesterday', 'x=1'];

describe('malformed input never causes a server error', () => {
  it('covers the whole API', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
  });

  it('answers every operation with a 4xx problem, never 5xx', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      if (!op.path.startsWith('/v0')) continue;
      for (const id of ids) {
        const url = op.path.replace(/\{[^}]+\}/g, id);
        const attempts = op.hasBody
          ? [...bodies.map((body) => JSON.stringify(body)), ...rawBodies].map((payload) => ({ payload, url }))
          : queries.map((q) => ({ payload: undefined, url: `${url}?${q}` }));
        for (const attempt of attempts) {
          const res = await t.request(tenant, {
            method: op.method as 'GET',
            url: attempt.url,
            payload: attempt.payload,
            headers: attempt.payload === undefined ? {} : { 'content-type': 'application/json' },
          });
          if (
            res.statusCode >= 500 ||
            (res.statusCode >= 400 && !String(res.headers['content-type']).includes('problem+json'))
          ) {
            failures.push(
              `${op.method} ${attempt.url.slice(0, 80)} ${attempt.payload?.slice(0, 60) ?? ''} → ${res.statusCode} ${res.body.slice(0, 120)}`,
            );
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses the NUL character in URLs (400) and in body strings (422 at the field)', async () => {
    const inUrl = await t.request(tenant, { method: 'GET', url: '/v0/persons/person%00x' });
    expect(inUrl.statusCode).toBe(400);
    expect(inUrl.json().code).toBe('bad_request');
    const inBody = await t.request(tenant, {
      method: 'POST',
      url: '/v0/accounts',
      payload: { domain: 'example.com', name: 'Acme\u0000Corp' },
    });
    expect(inBody.statusCode).toBe(422);
    expect(inBody.json().errors).toEqual([
      { path: '/body/name', message: 'must not contain the NUL character (\\u0000)' },
    ]);
  });

  it('does not let a body pollute prototypes', () => {
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
