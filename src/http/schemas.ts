import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** Shapes shared by every resource: timestamps, ids, the list envelope, pagination, problems. */

/** Objects accept no property they do not declare (docs/api.md: unknown fields are rejected). */
export const strict = { additionalProperties: false } as const;

export const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T15:32:00.000Z',
  examples: ['2026-11-22T15:32:00.000Z'],
});

/**
 * `T | null`. For primitive schemas this is `type: [T, "null"]` rather than `anyOf`: the response
 * serializer (fast-json-stringify) handles a type list directly but resolves `anyOf` by running a
 * validator on every value it writes, which costs more than the whole database read.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array') {
    // An enum lists every allowed value, so null joins it too.
    const values = (schema as { enum?: unknown[] }).enum;
    const nullable = values === undefined ? {} : { enum: [...values, null] };
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...nullable });
  }
  return Type.Union([schema, Type.Null()]);
}

/** A string enum as `{ type: "string", enum: [...] }` (not `anyOf` of literals, for the same reason). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const NullableTimestamp = Nullable(Timestamp);

const MAX_SAFE_COUNT = Number.MAX_SAFE_INTEGER;
export const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_COUNT });

/**
 * An id in a path. Deliberately only length-checked: an id of the wrong shape is just an id that
 * does not exist, so it gets the same 404 as any other unknown id.
 */
export const ResourceId = Type.String({ minLength: 1, maxLength: 200 });

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** `cursor` and `limit`, the pagination parameters of every list and search. */
export const PaginationQuery = {
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: 'Opaque; the `nextCursor` of the previous page.' }),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: MAX_LIMIT,
    default: DEFAULT_LIMIT,
    description: `Items per page, 1..${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
  }),
};

/** The longest accepted `query` of a search endpoint. */
export const SearchText = Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring.' });

export function Envelope<T extends TSchema>(item: T, options: { nullableTotal?: boolean; $id?: string } = {}) {
  return Type.Object(
    {
      hasMore: Type.Boolean(),
      items: Type.Array(item),
      nextCursor: Nullable(Type.String()),
      totalCount: options.nullableTotal ? Nullable(Count) : Count,
    },
    { additionalProperties: false, ...(options.$id ? { $id: options.$id } : {}) },
  );
}

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'urn:audience-pages:problem:<code>' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable machine-readable error code; see docs/api.md.' }),
    instance: Type.Optional(Type.String()),
    requestId: Type.String(),
    errors: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details.' },
);

/** Default error responses documented on every /v0 route. */
export const standardErrorResponses = {
  400: Type.Ref('Problem'),
  401: Type.Ref('Problem'),
  404: Type.Ref('Problem'),
  422: Type.Ref('Problem'),
  429: Type.Ref('Problem'),
};
