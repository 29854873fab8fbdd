import type { TSchema } from '@sinclair/typebox';

/**
 * The JSON schema sent as `response_format.json_schema.schema`, derived from the TypeBox schema
 * that validates the answer, in the subset OpenAI's strict mode accepts (and that Ollama, vLLM and
 * llama.cpp turn into a grammar): every object lists all its properties as required and forbids
 * others; only `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `anyOf`
 * and `description` are kept. Limits the subset cannot say (`maxLength`, `maxItems`, …) move into
 * the description, so the model still reads them; the validator keeps enforcing them.
 */
export function strictJsonSchema(schema: TSchema): Record<string, unknown> {
  return convert(schema as unknown as Record<string, unknown>, '#');
}

const LIMIT_WORDS: [keyword: string, text: (n: number) => string][] = [
  ['minLength', (n) => `at least ${n} characters`],
  ['maxLength', (n) => `at most ${n} characters`],
  ['minItems', (n) => `at least ${n} items`],
  ['maxItems', (n) => `at most ${n} items`],
];

function convert(node: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(node.anyOf)) {
    out.anyOf = node.anyOf.map((branch, i) => convert(branch as Record<string, unknown>, `${path}/anyOf/${i}`));
  }
  if (node.type !== undefined) out.type = node.type;
  if (node.const !== undefined) out.enum = [node.const];
  if (Array.isArray(node.enum)) out.enum = [...node.enum];
  const limits = LIMIT_WORDS.filter(([k]) => typeof node[k] === 'number').map(([k, text]) => text(node[k] as number));
  const description = [typeof node.description === 'string' ? node.description : '', limits.join(', ')]
    .filter(Boolean)
    .join(' ');
  if (description !== '')
    out.description = limits.length > 0 && !description.endsWith('.') ? `${description}.` : description;
  if (node.type === 'object') {
    const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
    const keys = Object.keys(properties);
    const required = new Set((node.required as string[] | undefined) ?? []);
    const optional = keys.filter((k) => !required.has(k));
    if (optional.length > 0 || node.additionalProperties !== false) {
      throw new Error(
        `${path}: strict structured output needs every property required and additionalProperties false` +
          (optional.length > 0 ? ` (optional: ${optional.join(', ')})` : ''),
      );
    }
    out.properties = Object.fromEntries(keys.map((k) => [k, convert(properties[k]!, `${path}/properties/${k}`)]));
    out.required = keys;
    out.additionalProperties = false;
  }
  if (node.type === 'array') out.items = convert(node.items as Record<string, unknown>, `${path}/items`);
  return out;
}
