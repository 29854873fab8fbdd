import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { responseMismatches } from '../openapi-responses.js';
import { rowCounts, useTestApp } from '../harness.js';

/** What docs/api.md ("The OpenAPI document") promises about the committed document. */

interface Operation {
  parameters?: { in: string; name: string; required?: boolean; schema?: { default?: unknown } }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string; type?: string } }> }>;
}
const doc = JSON.parse(fs.readFileSync('docs/openapi.json', 'utf8')) as {
  servers?: { url: string }[];
  info: { license?: { name: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
);

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

describe('the OpenAPI document', () => {
  it('declares every error as the Problem schema under application/problem+json', () => {
    const wrong = operations.flatMap(({ name, op }) =>
      Object.entries(op.responses)
        .filter(([status]) => Number(status) >= 400)
        .filter(
          ([, r]) =>
            Object.keys(r.content ?? {}).join() !== 'application/problem+json' ||
            r.content!['application/problem+json']!.schema?.$ref !== '#/components/schemas/Problem',
        )
        .map(([status]) => `${name} ${status}`),
    );
    expect(wrong).toEqual([]);
  });

  it('requires no field or parameter that has a default', () => {
    const required: string[] = [];
    const walk = (schema: unknown, where: string): void => {
      if (schema === null || typeof schema !== 'object') return;
      const s = schema as { required?: string[]; properties?: Record<string, { default?: unknown }> };
      for (const name of Array.isArray(s.required) ? s.required : [])
        if (s.properties?.[name]?.default !== undefined) required.push(`${where} ${name}`);
      for (const value of Object.values(schema)) walk(value, where);
    };
    for (const { name, op } of operations) {
      for (const p of op.parameters ?? [])
        if (p.required && p.schema?.default !== undefined) required.push(`${name} ${p.name}`);
      walk(op.requestBody, name);
    }
    expect(required).toEqual([]);
    const accounts = doc.paths['/v0/accounts']!.get!.parameters!;
    expect(accounts.find((p) => p.name === 'limit')?.required).toBe(false);
    expect(accounts.find((p) => p.name === 'includeEmptyOnly')?.required).toBe(false);
  });

  it('documents the /files operations: bytes in and out, signature required', () => {
    const file = doc.paths['/files/{file_id}']!;
    expect(Object.keys(file.get!.responses['200']!.content!)).toEqual(
      expect.arrayContaining(['image/png', 'image/jpeg', 'image/webp']),
    );
    expect(Object.keys(doc.paths['/files/{file_id}/preview']!.get!.responses['200']!.content!)).toEqual(['image/webp']);
    expect(Object.keys(file.put!.requestBody!.content)).toEqual(
      expect.arrayContaining(['image/png', 'application/octet-stream']),
    );
    for (const op of [file.get!, file.put!, doc.paths['/files/{file_id}/preview']!.get!]) {
      const query = op.parameters!.filter((p) => p.in === 'query');
      expect(query.map((p) => [p.name, p.required])).toEqual([
        ['expires', true],
        ['signature', true],
      ]);
    }
  });

  it('references its named components from the responses, names servers and a license', () => {
    const text = JSON.stringify(doc.paths);
    const unused = Object.keys(doc.components.schemas).filter(
      (name) =>
        !text.includes(`"#/components/schemas/${name}"`) &&
        !JSON.stringify(doc.components).includes(`"#/components/schemas/${name}"`),
    );
    expect(unused).toEqual([]);
    expect(doc.paths['/v0/persons/{person_id}']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/Person',
    });
    expect(doc.servers?.length).toBeGreaterThan(0);
    expect(doc.info.license?.name).toBeTruthy();
  });
});

describe('unknown query parameters', () => {
  it('are refused with 422 on operations that declare none, and nothing is written', async () => {
    const before = await rowCounts(tenant);
    const get = await t.request(tenant, { method: 'GET', url: '/v0/persons/person_x?foo=1' });
    expect(get.statusCode).toBe(422);
    expect(get.json().errors).toEqual([{ path: '/query/foo', message: 'is not a known field' }]);
    const post = await t.request(tenant, { method: 'POST', url: '/v0/topics?foo=1', payload: { title: 'News' } });
    expect(post.statusCode).toBe(422);
    expect(post.json().errors).toEqual([{ path: '/query/foo', message: 'is not a known field' }]);
    expect(await rowCounts(tenant)).toEqual(before);
  });
});

describe('the response check of the test harness', () => {
  const response = (statusCode: number, contentType: string, body: unknown) =>
    ({
      statusCode,
      headers: { 'content-type': contentType },
      body: JSON.stringify(body),
      rawPayload: Buffer.from(JSON.stringify(body)),
    }) as unknown as LightMyRequestResponse;

  it('finds an undeclared status, a wrong media type and a body off its schema', () => {
    expect(responseMismatches('GET', '/v0/persons/p1', response(418, 'application/json', {}))).toEqual([
      expect.stringContaining('status 418 is not declared'),
    ]);
    expect(responseMismatches('GET', '/v0/persons/p1', response(404, 'application/json', {}))).toEqual([
      expect.stringContaining('media type "application/json" is not declared'),
    ]);
    expect(responseMismatches('GET', '/v0/persons/p1', response(200, 'application/json', { personId: 1 }))).not.toEqual(
      [],
    );
    expect(
      responseMismatches('GET', '/v0/pages/search?query=x', response(200, 'application/json', { items: [] })),
    ).not.toEqual([]);
    expect(responseMismatches('GET', '/somewhere/else', response(418, 'text/plain', 'x'))).toEqual([]);
  });
});
