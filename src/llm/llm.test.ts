import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { retryAfterMs } from './errors.js';
import { strictJsonSchema } from './strict-schema.js';

const ALLOWED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'anyOf',
  'description',
]);

/** Every node of a JSON schema, with its path. */
function* nodes(node: Record<string, unknown>, path = '#'): Generator<[string, Record<string, unknown>]> {
  yield [path, node];
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    yield* nodes(child, `${path}/properties/${key}`);
  }
  if (node.items) yield* nodes(node.items as Record<string, unknown>, `${path}/items`);
  for (const [i, branch] of ((node.anyOf ?? []) as Record<string, unknown>[]).entries())
    yield* nodes(branch, `${path}/anyOf/${i}`);
}

const Item = Type.Object(
  { title: Type.String({ maxLength: 80 }), done: Type.Boolean() },
  { additionalProperties: false },
);
const Sample = Type.Object(
  {
    headline: Type.String({
      minLength: 1,
      maxLength: 140,
      description: 'The page’s main heading.',
      $id: 'x',
      default: 'y',
    }),
    sections: Type.Array(
      Type.Union(
        ['text', 'benefits', 'steps', 'proof', 'faq'].map((kind) =>
          Type.Object(
            { kind: Type.Literal(kind), items: Type.Array(Item, { maxItems: 6 }) },
            { additionalProperties: false },
          ),
        ),
      ),
      { maxItems: 8 },
    ),
  },
  { additionalProperties: false },
);

describe('the strict structured-output schema', () => {
  it('is the TypeBox schema in the subset strict mode accepts, its limits told in words', () => {
    const schema = strictJsonSchema(Sample);
    let objects = 0;
    for (const [path, node] of nodes(schema)) {
      expect(
        Object.keys(node).filter((k) => !ALLOWED.has(k)),
        path,
      ).toEqual([]);
      if (node.type === 'object') {
        objects++;
        expect(node.additionalProperties, path).toBe(false);
        expect(node.required, path).toEqual(Object.keys(node.properties as object));
      }
    }
    expect(objects).toBe(11);
    const properties = schema.properties as Record<string, { description: string }>;
    expect(properties.headline).toEqual({
      type: 'string',
      description: 'The page’s main heading. at least 1 characters, at most 140 characters.',
    });
    expect(properties.sections!.description).toBe('at most 8 items.');
    const kinds = [...nodes(schema)].filter(([path]) => path.endsWith('/properties/kind')).map(([, n]) => n.enum);
    expect(kinds).toEqual([['text'], ['benefits'], ['steps'], ['proof'], ['faq']]);
  });

  it('refuses a schema with an optional property or open objects (a mistake caught at start, not by the provider)', () => {
    expect(() =>
      strictJsonSchema(Type.Object({ a: Type.Optional(Type.String()) }, { additionalProperties: false })),
    ).toThrow(/optional: a/);
    expect(() => strictJsonSchema(Type.Object({ a: Type.String() }))).toThrow(/additionalProperties false/);
  });
});

describe('Retry-After', () => {
  const headers = (h: Record<string, string>) => new Headers(h);
  it('reads seconds, an HTTP date and OpenAI’s retry-after-ms, capped at an hour', () => {
    expect(retryAfterMs(headers({ 'retry-after': '7' }))).toBe(7_000);
    expect(
      retryAfterMs(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), Date.parse('2026-01-01T00:00:00Z')),
    ).toBe(30_000);
    expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after': '999999' }))).toBe(3_600_000);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeNull();
    expect(retryAfterMs(headers({}))).toBeNull();
  });
});
