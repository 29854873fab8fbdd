import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Nullable, PaginationQuery, ResourceId, SearchText, Timestamp, strict } from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Persons). */
const PERSON_LIMITS = { name: 255, email: 254, domain: 2048, socialProfileUrl: 2048 } as const;

export const PHONE_PATTERN = '^\\+[1-9]\\d{1,14}$';

export const PersonName = Type.String({ minLength: 1, maxLength: PERSON_LIMITS.name });
export const PersonEmail = Type.String({
  minLength: 1,
  maxLength: PERSON_LIMITS.email,
  description: 'Matched case-insensitively; must look like name@example.com.',
});
export const PhoneNumber = Type.String({ pattern: PHONE_PATTERN, description: 'E.164, e.g. +14155550123.' });
export const SocialProfileUrl = Type.String({
  minLength: 1,
  maxLength: PERSON_LIMITS.socialProfileUrl,
  description: 'An http(s) URL; matched after normalization (host without www., path, case-insensitive).',
});
const PersonDomain = Type.String({
  minLength: 1,
  maxLength: PERSON_LIMITS.domain,
  description: 'Canonicalized like an account domain; links the person to the account of that domain.',
});

export const Person = Type.Object(
  {
    personId: Type.String({ minLength: 1 }),
    name: Type.String(),
    email: Nullable(Type.String()),
    domain: Nullable(Type.String({ minLength: 1 })),
    slug: Type.String(),
    phoneNumber: Nullable(Type.String({ pattern: PHONE_PATTERN })),
    socialProfileUrl: Nullable(Type.String({ minLength: 1 })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Person', ...strict },
);

export const PersonPatchBody = Type.Object(
  {
    name: Type.Optional(PersonName),
    email: Type.Optional(Nullable(PersonEmail)),
    domain: Type.Optional(Nullable(PersonDomain)),
    phoneNumber: Type.Optional(Nullable(PhoneNumber)),
    socialProfileUrl: Type.Optional(Nullable(SocialProfileUrl)),
  },
  strict,
);

export const PersonParams = Type.Object({ person_id: ResourceId }, strict);
export const PersonSearchQuery = Type.Object({ ...PaginationQuery, query: SearchText }, strict);
export const PersonSearchResult = Envelope(Type.Ref('Person'), { $id: 'PersonSearchResult', nullableTotal: true });

export type Person = Static<typeof Person>;
export type PersonPatchBody = Static<typeof PersonPatchBody>;

export const personSchemas = [Person];
