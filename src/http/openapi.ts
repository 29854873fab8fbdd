import type { SwaggerTransform } from '@fastify/swagger';
import type { RouteOptions } from 'fastify';

/**
 * How the route schemas become the published OpenAPI document. The route schemas stay what the
 * validator and the serializer need; what only a reader of the document needs (component
 * references, the problem media type, which defaulted fields a client may omit) is added here,
 * once for every route, so no route can forget it (docs/api.md, "The OpenAPI document").
 */

/** Per route (`transform`): success bodies that are named components are referenced, not copied. */
export const documentRoute: SwaggerTransform = ({ schema, url, ...document }) => {
  const schemas = 'openapiObject' in document ? document.openapiObject.components?.schemas : undefined;
  const components = new Set(Object.keys(schemas ?? {}));
  const response = (schema as { response?: Record<string, unknown> }).response;
  if (response === undefined) return { schema, url };
  return {
    schema: { ...schema, response: referenceComponents(response, components) } as typeof schema,
    url,
  };
};

/** A copy of `value` in which every subschema whose `$id` names a component is a `$ref` to it. */
function referenceComponents(value: unknown, components: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => referenceComponents(v, components));
  if (value === null || typeof value !== 'object') return value;
  const id = (value as { $id?: unknown }).$id;
  if (typeof id === 'string' && components.has(id)) {
    const { description } = value as { description?: string };
    return description === undefined ? { $ref: id } : { $ref: id, description };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, referenceComponents(v, components)]));
}

export interface DocumentOptions {
  /** PUBLIC_BASE_URL; without it the document names its own origin (a relative server URL). */
  publicBaseUrl: string | null;
}

interface Operation {
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/** Whole document (`transformObject`): servers, license, problem media type, optional defaults. */
export function finishDocument<D extends { paths?: object }>(doc: D, options: DocumentOptions): D {
  for (const operations of Object.values(doc.paths ?? {}) as Record<string, Operation>[]) {
    for (const operation of Object.values(operations)) {
      // Any operation that takes a body can be sent one too large (413) or not JSON (415),
      // before its handler runs: declared here once rather than on every route.
      if (operation.requestBody !== undefined && operation.responses !== undefined) {
        const responses = operation.responses;
        const problem = Object.entries(responses).find(([status]) => Number(status) >= 400)?.[1];
        for (const status of ['413', '415']) if (problem && !responses[status]) responses[status] = problem;
        operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        // Every error is RFC 9457 problem+json (http/plugins/problem.ts); the serializer only
        // knows the schema, so the media type is set here.
        const json = response.content?.['application/json'];
        if (Number(status) >= 400 && json !== undefined) {
          response.content = { 'application/problem+json': json };
        }
      }
      // A parameter or field with a default may be left out: the validator fills it in.
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema?.default !== undefined) parameter.required = false;
      }
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        dropDefaultedRequired(media.schema);
      }
    }
  }
  return {
    ...doc,
    servers: [
      options.publicBaseUrl === null
        ? { url: '/', description: 'The origin serving this document (set PUBLIC_BASE_URL to name it).' }
        : { url: options.publicBaseUrl },
    ],
  };
}

function dropDefaultedRequired(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(dropDefaultedRequired);
  if (schema === null || typeof schema !== 'object') return;
  const object = schema as { required?: string[]; properties?: Record<string, { default?: unknown }> };
  if (Array.isArray(object.required) && object.properties !== undefined) {
    const required = object.required.filter((name) => object.properties![name]?.default === undefined);
    if (required.length > 0) object.required = required;
    else delete object.required;
  }
  for (const value of Object.values(schema)) dropDefaultedRequired(value);
}

/**
 * Every documented operation refuses query parameters it does not declare (422 at
 * `/query/<name>`), as the list endpoints always did: one rule, whether or not the operation takes
 * any (docs/api.md). Registered as an `onRoute` hook before the routes.
 */
export function refuseUnknownQueryParameters(route: RouteOptions): void {
  const schema = route.schema as { hide?: boolean; operationId?: string; querystring?: object } | undefined;
  if (schema === undefined || schema.hide === true || schema.operationId === undefined) return;
  schema.querystring = schema.querystring
    ? { ...schema.querystring, additionalProperties: false }
    : { type: 'object', properties: {}, additionalProperties: false };
}
