import { Type, type Static } from '@sinclair/typebox';
import { Envelope, PaginationQuery, ResourceId, Timestamp, strict } from '../../http/schemas.js';
import { PersonEmail, PersonName, PhoneNumber, SocialProfileUrl } from '../persons/index.js';

/** Limits the spec leaves open (docs/api.md, Person log entries). */
export const PERSON_LOG_LIMITS = { payloadBytes: 64 * 1024 } as const;

const KEBAB_CASE = '^[a-z0-9]+(-[a-z0-9]+)*$';
const Kebab = Type.String({ minLength: 1, maxLength: 100, pattern: KEBAB_CASE });

export const PersonLogBody = Type.Object(
  {
    source: { ...Kebab, description: 'Where the entry comes from, e.g. `hubspot` or `web-form`.' },
    type: Type.String({ ...Kebab, default: 'webhook', description: 'Kind of entry; `webhook` when omitted.' }),
    payload: Type.Object(
      {},
      {
        additionalProperties: true,
        description: `Any JSON object, at most ${PERSON_LOG_LIMITS.payloadBytes / 1024} KiB as JSON text.`,
      },
    ),
    personId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    email: Type.Optional(PersonEmail),
    phoneNumber: Type.Optional(PhoneNumber),
    socialProfileUrl: Type.Optional(SocialProfileUrl),
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    name: Type.Optional(PersonName),
  },
  strict,
);

export const PersonLogCreated = Type.Object(
  {
    personId: Type.String({ minLength: 1 }),
    personLogId: Type.String({ minLength: 1 }),
    createdAt: Timestamp,
    createdPerson: Type.Boolean(),
    source: Type.String({ minLength: 1, maxLength: 100, pattern: KEBAB_CASE }),
    type: Type.String({ minLength: 1, maxLength: 100, pattern: KEBAB_CASE }),
  },
  { $id: 'PersonLogCreated', ...strict },
);

/** One entry of a person's activity timeline, as endpoint 11 wrote it (an extension: docs/api.md). */
export const PersonLogEntry = Type.Object(
  {
    personLogId: Type.String({ minLength: 1 }),
    personId: Type.String({ minLength: 1 }),
    source: Type.String({ minLength: 1, maxLength: 100, pattern: KEBAB_CASE }),
    type: Type.String({ minLength: 1, maxLength: 100, pattern: KEBAB_CASE }),
    payload: Type.Object({}, { additionalProperties: true, description: 'The JSON object as written.' }),
    createdAt: Timestamp,
  },
  { $id: 'PersonLogEntry', ...strict },
);

export const PersonLogParams = Type.Object({ person_id: ResourceId }, strict);
export const PersonLogListQuery = Type.Object(
  {
    ...PaginationQuery,
    source: Type.Optional({ ...Kebab, description: 'Only entries of this `source`.' }),
    type: Type.Optional({ ...Kebab, description: 'Only entries of this `type`.' }),
  },
  strict,
);
export const PersonLogList = Envelope(Type.Ref('PersonLogEntry'), { $id: 'PersonLogList' });

export type PersonLogBody = Static<typeof PersonLogBody>;
export type PersonLogEntry = Static<typeof PersonLogEntry>;
export type PersonLogCreated = Static<typeof PersonLogCreated>;

export const personLogSchemas = [PersonLogCreated, PersonLogEntry];
