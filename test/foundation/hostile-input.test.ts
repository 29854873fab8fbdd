import { describe, expect, it } from 'vitest';
import { problem, rowCounts, useTestApp, type Tenant } from '../harness.js';
import { makePage } from '../factories/pages.js';

/** Inputs that once crashed a request (issue 10): each is a clear 4xx, and writes nothing. */
const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

const DEPTH = 200_000;
/** About 400 KB: `{"a":[[[[…200,000 deep…]]]]}`. */
const deepJson = `{"a":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`;
/** The pointer of the first value nested deeper than 64 levels, `deepJson` sent at `base` (the body is level 1). */
const tooDeepAt = (base: string) => `${base}/a${'/0'.repeat(63 - (base.split('/').length - 2))}`;

async function send(tenantOrNull: Tenant | null, method: string, url: string, payload?: string) {
  return t.request(tenantOrNull, {
    method: method as 'POST',
    url,
    payload,
    headers: payload === undefined ? {} : { 'content-type': 'application/json' },
  });
}

describe('deeply nested JSON (limit 64 levels)', () => {
  it('answers 422 json_too_deep at the field on authenticated and idempotent routes, writing nothing', async () => {
    const pageId = await makePage(tenant.scope, t.clock);
    const before = await rowCounts(tenant);
    const cases = [
      // person logs take an idempotency key: the fingerprint must not be where it breaks
      {
        url: '/v0/person_logs',
        method: 'POST',
        body: `{"source":"crm","email":"deep@example.com","idempotencyKey":"k1","payload":${deepJson}}`,
        at: tooDeepAt('/body/payload'),
      },
      {
        url: '/v0/assets',
        method: 'POST',
        body: `{"assetType":"image","name":"x","fileId":"file_x","idempotencyKey":"k2","extra":${deepJson}}`,
        at: tooDeepAt('/body/extra'),
      },
      {
        url: `/v0/pages/${pageId}`,
        method: 'PATCH',
        body: `{"metadata":${deepJson}}`,
        at: tooDeepAt('/body/metadata'),
      },
      { url: '/v0/accounts', method: 'POST', body: deepJson, at: tooDeepAt('/body') },
    ];
    for (const c of cases) {
      expect(c.body.length).toBeGreaterThan(400_000);
      const res = await send(tenant, c.method, c.url, c.body);
      expect(res.statusCode, c.url).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('json_too_deep');
      expect(body.errors).toEqual([{ path: c.at, message: 'must not nest objects and arrays deeper than 64 levels' }]);
    }
    expect(await rowCounts(tenant)).toEqual(before);
  });

  it('accepts 64 levels', async () => {
    // body (1) > payload (2) > 62 arrays: the deepest array is the 64th level
    const payload = `{"a":${'['.repeat(62)}${']'.repeat(62)}}`;
    const res = await send(
      tenant,
      'POST',
      '/v0/person_logs',
      `{"source":"crm","email":"ok@example.com","payload":${payload}}`,
    );
    expect(res.statusCode).toBe(201);
    const deeper = `{"a":${'['.repeat(63)}${']'.repeat(63)}}`;
    const refused = await send(
      tenant,
      'POST',
      '/v0/person_logs',
      `{"source":"crm","email":"ok@example.com","payload":${deeper}}`,
    );
    expect(problem(refused).code).toBe('json_too_deep');
  });
});

describe('lone UTF-16 surrogates', () => {
  const message = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff unpaired)';

  it('answers 422 at the field, in values and keys, on both engines alike, writing nothing', async () => {
    const pageId = await makePage(tenant.scope, t.clock);
    const before = await rowCounts(tenant);
    // Written as JSON escapes: JSON.stringify would escape a lone surrogate the same way.
    const cases = [
      {
        url: '/v0/person_logs',
        method: 'POST',
        body: '{"source":"crm","email":"s@example.com","payload":{"v":"a\\ud800"}}',
        at: '/body/payload/v',
      },
      {
        url: '/v0/person_logs',
        method: 'POST',
        body: '{"source":"crm","email":"s@example.com","payload":{"k\\udfff":1}}',
        at: '/body/payload/k\udfff',
      },
      {
        url: '/v0/person_logs',
        method: 'POST',
        body: '{"source":"crm","email":"s@example.com","payload":{"l":["ok","\\udc00x"]}}',
        at: '/body/payload/l/1',
      },
      {
        // The path is a JSON pointer: "~" and "/" in a key are escaped (RFC 6901).
        url: '/v0/person_logs',
        method: 'POST',
        body: '{"source":"crm","email":"s@example.com","payload":{"a/b~c":{"ok":1,"d":["\\ud800"]}}}',
        at: '/body/payload/a~1b~0c/d/0',
      },
      {
        url: `/v0/pages/${pageId}`,
        method: 'PATCH',
        body: '{"metadata":{"keywords":["a","\\ud83d"]}}',
        at: '/body/metadata/keywords/1',
      },
      {
        url: `/v0/pages/${pageId}`,
        method: 'PATCH',
        body: '{"metadata":{"title":"\\ude00"}}',
        at: '/body/metadata/title',
      },
      {
        url: `/v0/pages/${pageId}`,
        method: 'PATCH',
        body: '{"actions":[{"purpose":"p\\ud800","buttonTitle":"b","actionType":"link","url":"https://example.com/"}]}',
        at: '/body/actions/0/purpose',
      },
      { url: '/v0/accounts', method: 'POST', body: '{"domain":"example.com","name":"\\ud800"}', at: '/body/name' },
    ];
    for (const c of cases) {
      const res = await send(tenant, c.method, c.url, c.body);
      expect(res.statusCode, c.body).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('validation_failed');
      expect(body.errors).toEqual([{ path: c.at, message }]);
    }
    expect(await rowCounts(tenant)).toEqual(before);
  });

  it('accepts well-formed surrogate pairs (emoji)', async () => {
    const res = await send(
      tenant,
      'POST',
      '/v0/person_logs',
      '{"source":"crm","email":"e@example.com","payload":{"v":"\\ud83d\\ude00"}}',
    );
    expect(res.statusCode).toBe(201);
  });
});

describe('over-long path ids, malformed URLs and unknown methods', () => {
  const longId = 'x'.repeat(201);

  it('tells a request without a valid key nothing but 401, whatever the path or method', async () => {
    const badKey = { 'x-api-key': 'apsk_not_a_key' };
    for (const [method, url] of [
      ['GET', `/v0/persons/${longId}`],
      ['DELETE', `/v0/persons/${longId}`],
      ['DELETE', '/v0/persons/person_x'],
      ['QUERY', `/v0/persons/${longId}`],
      ['GET', '/v0/no_such_thing'],
      ['GET', '/v0/persons/%ZZ'],
    ] as const) {
      for (const headers of [{}, badKey]) {
        const res = await t.request(null, { method: method as 'GET', url, headers });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.headers.allow).toBeUndefined();
        expect(res.headers['x-request-id']).toBeTruthy();
        expect(problem(res).code).toMatch(/^(missing|invalid)_api_key$/);
      }
    }
  });

  it('answers an over-long id with a valid key as an unknown id: 404 not_found (problem+json)', async () => {
    for (const url of [`/v0/persons/${longId}`, `/v0/pages/${longId}/audiences`, `/v0/assets/${longId}`]) {
      const res = await t.request(tenant, { method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    const patch = await send(tenant, 'PATCH', `/v0/persons/${longId}`, '{"name":"x"}');
    expect(problem(patch).code).toBe('not_found');
    // 200 characters is still an id (simply an unknown one)
    const edge = await t.request(tenant, { method: 'GET', url: `/v0/persons/${'x'.repeat(200)}` });
    expect(problem(edge).code).toBe('not_found');
  });

  it('answers another method on an over-long id 405 with Allow, once authenticated', async () => {
    const res = await t.request(tenant, { method: 'PUT', url: `/v0/persons/${longId}` });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    expect(problem(res).code).toBe('method_not_allowed');
  });

  it('answers a malformed percent-encoding 400 problem+json with x-request-id', async () => {
    for (const url of ['/v0/persons/%ZZ', '/v0/pages/%E0%A4%A/audiences']) {
      const res = await t.request(tenant, { method: 'GET', url, headers: { 'x-request-id': 'my-req-1' } });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['x-request-id']).toBe('my-req-1');
      const body = problem(res);
      expect(body.code).toBe('bad_request');
      expect(body.requestId).toBe('my-req-1');
    }
    // outside /v0 (signed file URLs) there is no key to check first
    const files = await t.request(null, { method: 'GET', url: '/files/%ZZ' });
    expect(files.statusCode).toBe(400);
    expect(problem(files).code).toBe('bad_request');
  });

  it('answers QUERY without a body 405 with Allow; a body never changes a 404/405 answer', async () => {
    const res = await t.request(tenant, { method: 'QUERY' as 'GET', url: '/v0/persons/person_x' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    expect(problem(res).code).toBe('method_not_allowed');
    const withBody = await send(tenant, 'POST', '/v0/persons/person_x', '{not json');
    expect(withBody.statusCode).toBe(405);
    const unknown = await send(tenant, 'POST', '/v0/no_such_thing', 'x'.repeat(10));
    expect(problem(unknown).code).toBe('route_not_found');
  });
});
