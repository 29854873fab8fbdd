import fs from 'node:fs';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../factories/audiences.js';
import { makeImageFile } from '../factories/files.js';
import { makePerson } from '../factories/persons.js';
import { rowCounts, useTestApp, type Tenant } from '../harness.js';

/**
 * Every operation of the OpenAPI document (so a new route is covered as soon as it is
 * documented), fed requests generated from its own schemas (valid and invalid bodies, queries and
 * path ids) and a corpus of hostile input. For every answer: never a 5xx; every error a
 * problem+json with a code docs/api.md lists; a refused request writes nothing. Each answer is also
 * checked against the document by the harness (test/openapi-responses.ts).
 *
 * Bounded for CI: FUZZ_RUNS generated requests per operation (default 12), a fixed seed (FUZZ_SEED
 * to explore others; a failure prints the seed and the shrunk request to replay).
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

const t = useTestApp({ tenants: ['Fuzz'] });
const [tenant] = t.tenants;

interface Schema {
  [key: string]: unknown;
}
interface Parameter {
  in: 'query' | 'path' | 'header';
  name: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: { type: string; schema: Schema };
}

let doc: { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };
let operations: Operation[];
/** Ids that exist in the tenant, by path parameter name, so generated requests reach the handlers. */
const knownIds: Record<string, string> = {};
let documentedCodes: Set<string>;

beforeAll(async () => {
  doc = (await t.request(null, { method: 'GET', url: '/openapi.json' })).json();
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      const [type, media] = Object.entries(content ?? {})[0] ?? [];
      return {
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        parameters: (op.parameters ?? []) as Parameter[],
        body: type && media ? { type, schema: media.schema } : undefined,
      };
    }),
  );
  // The codes an error may carry: those docs/api.md names.
  allTables = await rowCounts(tenant);
  documentedCodes = new Set(
    [...fs.readFileSync('docs/api.md', 'utf8').matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!),
  );

  const { pageId, audienceId } = await makeAudience(tenant.scope, t.clock);
  knownIds.page_id = pageId;
  knownIds.audience_id = audienceId;
  knownIds.person_id = await makePerson(tenant.scope, t.clock);
  const account = await t.request(tenant, { method: 'POST', url: '/v0/accounts', payload: { domain: 'fuzz.example' } });
  knownIds.account_id = account.json().accountId;
  const topic = await t.request(tenant, { method: 'POST', url: '/v0/topics', payload: { title: 'Fuzz' } });
  knownIds.topic_id = topic.json().topicId;
  knownIds.file_id = await makeImageFile(t, tenant);
  const asset = await t.request(tenant, {
    method: 'POST',
    url: '/v0/assets',
    payload: { assetType: 'image', name: 'Fuzz', fileId: knownIds.file_id },
  });
  knownIds.asset_id = asset.json().assetId;
});

// ---------------------------------------------------------------------------------------------
// Arbitraries from JSON Schema (the subset the route schemas use).

function resolve(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return resolve(doc.components.schemas[ref.replace('#/components/schemas/', '')]!);
}

function fromSchema(input: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(input);
  if (depth > 5) return fc.constant(null);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fromSchema(s, depth + 1)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...(schema.type as string[]).map((type) => fromSchema({ ...schema, type }, depth)));
  }
  switch (schema.type) {
    case 'string':
      return stringFrom(schema);
    case 'integer':
      return fc.integer({ min: num(schema.minimum, -1e6), max: num(schema.maximum, 1e6) });
    case 'number':
      return fc.double({ min: num(schema.minimum, -1e6), max: num(schema.maximum, 1e6), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = num(schema.minItems, 0);
      const maxLength = Math.max(minLength, Math.min(num(schema.maxItems, 4), 4));
      return fc.array(schema.items ? fromSchema(schema.items as Schema, depth + 1) : fc.jsonValue(), {
        minLength,
        maxLength,
      });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const record = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, fromSchema(s, depth + 1)]));
      return fc.record(record, { requiredKeys: ((schema.required ?? []) as string[]).filter((k) => k in record) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

const num = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

function stringFrom(schema: Schema): fc.Arbitrary<string> {
  const minLength = num(schema.minLength, 0);
  const maxLength = Math.max(minLength, Math.min(num(schema.maxLength, 40), 300));
  const fit = (s: string) => (s.length > maxLength ? s.slice(0, maxLength) : s);
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl().map(fit);
    case 'email':
      return fc.emailAddress().map(fit);
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).map(fit);
  return fc.string({
    minLength,
    maxLength,
    unit: fc.oneof(fc.constantFrom('a', '-', '.', ' '), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  });
}

/** A schema's valid values, then values that break it: other JSON, an unknown field. */
function bodyArbitrary(schema: Schema): fc.Arbitrary<unknown> {
  const valid = fromSchema(schema);
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    {
      weight: 1,
      arbitrary: valid.map((v) =>
        v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, fuzzUnknown: 1 } : v,
      ),
    },
  );
}

function requestArbitrary(op: Operation): fc.Arbitrary<InjectOptions> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const ids = Object.fromEntries(
    pathParams.map((p) => [
      p.name,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(knownIds[p.name] ?? 'x') },
        { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }) },
      ),
    ]),
  );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((p) => [
        p.name,
        fc.option(fc.oneof(fromSchema(p.schema ?? {}).map(String), fc.string({ maxLength: 30 })), { nil: undefined }),
      ]),
    ),
  );
  const unknownQuery = fc.option(fc.constant('1'), { freq: 5, nil: undefined });
  const body = op.body?.type === 'application/json' ? bodyArbitrary(op.body.schema) : fc.constant(undefined);
  return fc.record({ ids: fc.record(ids), query, unknownQuery, body }).map(({ ids, query, unknownQuery, body }) => {
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(ids[name])));
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) search.set(k, String(v));
    if (unknownQuery !== undefined) search.set('fuzzUnknown', unknownQuery);
    const qs = search.toString();
    return {
      method: op.method as InjectOptions['method'],
      url: qs ? `${path}?${qs}` : path,
      ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The rules every answer follows.

/** `rowCounts` in one statement (it runs after every request here). */
async function counts(of: Tenant): Promise<Record<string, number>> {
  const tables = Object.keys(allTables);
  const { rows } = await sql<Record<string, number | string>>`select ${sql.join(
    tables.map(
      (table) => sql`(select count(*) from ${sql.table(table)} where tenant_id = ${of.tenantId}) as ${sql.id(table)}`,
    ),
  )}`.execute(t.database.kysely);
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}
/** Every tenant table (the harness' list), as `rowCounts` reports them. */
let allTables: Record<string, number>;

let baseline: Record<string, number> | undefined;
const statuses = new Map<number, number>();

async function send(options: InjectOptions): Promise<LightMyRequestResponse> {
  baseline ??= await counts(tenant);
  const response = await t.request(tenant, options);
  statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
  const where = `${String(options.method)} ${String(options.url).slice(0, 160)}`;
  expect(response.statusCode, `${where}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
  if (response.statusCode >= 400) {
    expect(String(response.headers['content-type']), where).toMatch(/^application\/problem\+json/);
    const { code } = response.json() as { code: string };
    expect(documentedCodes.has(code), `${where}: code "${code}" is not in docs/api.md`).toBe(true);
    expect(await counts(tenant), `${where} → ${response.statusCode} ${code} wrote something`).toEqual(baseline);
  } else {
    baseline = await counts(tenant);
  }
  return response;
}

describe('fuzz: every operation, requests generated from its schemas', () => {
  it('covers every documented operation', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
  });

  it('never answers 5xx, errors are documented problems, refusals write nothing', async () => {
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op), async (options) => {
          await send(options);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }
    // The generated requests reach the handlers: some succeed, some are refused.
    const succeeded = [...statuses].filter(([status]) => status < 300).reduce((n, [, c]) => n + c, 0);
    expect(succeeded, JSON.stringify([...statuses])).toBeGreaterThan(RUNS);
    // About 15 s on either engine on a quiet machine; the margin is for a loaded CI host.
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Hostile input, each case sent to every operation it applies to.

const deep = (depth: number) => `{"payload":${'['.repeat(depth)}${']'.repeat(depth)}}`;

interface HostileCase {
  name: string;
  /** The requests of this case for one operation (none when it does not apply). */
  requests(op: Operation, path: (id: string) => string): InjectOptions[];
}

const withId = (op: Operation, ids: string[], path: (id: string) => string) =>
  op.path.includes('{') ? ids.map((id) => ({ method: op.method as InjectOptions['method'], url: path(id) })) : [];
const withBody = (op: Operation, path: (id: string) => string, payloads: string[], type = 'application/json') =>
  op.body?.type === 'application/json'
    ? payloads.map((payload) => ({
        method: op.method as InjectOptions['method'],
        url: path('x'),
        payload,
        headers: { 'content-type': type },
      }))
    : [];

const HOSTILE: HostileCase[] = [
  { name: 'deeply nested JSON (item 1)', requests: (op, path) => withBody(op, path, [deep(100_000), deep(5_000)]) },
  {
    name: 'lone UTF-16 surrogates in JSON strings (item 2)',
    requests: (op, path) =>
      withBody(op, path, [
        '{"name":"\\ud800","title":"\\udfff","source":"a","payload":{"k":"\\ud800"},"metadata":{"title":"\\ud800"}}',
        '{"payload":{"\\udc00":1},"source":"web","email":"a@b.example"}',
      ]),
  },
  {
    name: 'over-long path ids (item 3)',
    requests: (op, path) => withId(op, ['x'.repeat(201), 'x'.repeat(5_000)], path),
  },
  {
    name: 'dates outside 0001-9999 (item 4)',
    requests: (op, path) =>
      op.parameters
        .filter((p) => p.in === 'query' && p.schema?.format === 'date-time')
        .flatMap((p) =>
          [
            '0000-01-01T00:00:00Z',
            '+010000-01-01T00:00:00Z',
            '9999-12-31T23:59:59-23:59',
            '0001-01-01T00:00:00+23:59',
          ].map((value) => ({
            method: op.method as InjectOptions['method'],
            url: `${path('x')}?${p.name}=${encodeURIComponent(value)}`,
          })),
        ),
  },
  {
    name: 'bad percent-encoding in the path (item 23)',
    requests: (op, path) => withId(op, ['%ZZ', '%E0%A4%A', '%', '%ED%A0%80'], path),
  },
  {
    name: 'bad percent-encoding in the query',
    requests: (op, path) => [
      { method: op.method as InjectOptions['method'], url: `${path('x')}?limit=%ZZ` },
      { method: op.method as InjectOptions['method'], url: `${path('x')}?%E0%A4%A=1` },
    ],
  },
  { name: 'NUL in ids', requests: (op, path) => withId(op, ['%00', 'a%00b'], path) },
  {
    name: 'huge strings',
    requests: (op, path) =>
      withBody(op, path, [JSON.stringify({ name: 'x'.repeat(600_000) }), JSON.stringify({ ['k'.repeat(100_000)]: 1 })]),
  },
  {
    name: 'malformed JSON and prototype keys',
    requests: (op, path) =>
      withBody(op, path, ['{', '[1,]', '{"a":1}{', '"\\x"', '{"__proto__":{"polluted":true}}', 'null', '[]']),
  },
  {
    name: 'wrong content types',
    requests: (op, path) =>
      [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'image/png',
      ].flatMap((type) => withBody(op, path, ['{}'], type)),
  },
  {
    name: 'unknown query parameters (item 22)',
    requests: (op, path) => [{ method: op.method as InjectOptions['method'], url: `${path('x')}?fuzzUnknown=1` }],
  },
];

describe('fuzz: hostile input on every operation', () => {
  for (const hostile of HOSTILE) {
    it(hostile.name, async () => {
      let sent = 0;
      for (const op of operations) {
        const path = (id: string) =>
          op.path.replace(/\{([^}]+)\}/g, (_, name: string) => (id === 'x' ? (knownIds[name] ?? id) : id));
        for (const request of hostile.requests(op, path)) {
          await send(request);
          sent++;
        }
      }
      expect(sent).toBeGreaterThan(0);
    });
  }
});
