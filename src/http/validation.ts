import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators: bodies are taken exactly as sent (no type coercion: `"name": 123` is an error,
 * not "123"), query strings and path parameters are coerced from their text form. Both reject
 * unknown properties (schemas say `additionalProperties: false`), report every problem at once,
 * and apply defaults.
 */
function makeAjv(options: Options) {
  const ajv = new Ajv.default({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv, ['date-time', 'uri', 'email', 'uuid', 'hostname']);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: true });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(withoutIds(schema)) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

/**
 * Request schemas are self-contained (no $ref), but they embed shapes that also serve as named
 * OpenAPI components and so carry an `$id`; Ajv refuses a second schema with an `$id` it already
 * knows, so the ids are dropped before compiling.
 */
function withoutIds(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === '$id' ? undefined : value)) as object;
}
