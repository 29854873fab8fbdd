import { Type, type Static } from '@sinclair/typebox';
import {
  Count,
  Envelope,
  NullableTimestamp,
  Nullable,
  PaginationQuery,
  ResourceId,
  SearchText,
  Timestamp,
  strict,
} from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Accounts). */
export const ACCOUNT_LIMITS = { name: 255, domainInput: 2048, linkedPersons: 100 } as const;

const accountFields = {
  accountId: Type.String({ minLength: 1, pattern: '^account_[a-z0-9]{26}$' }),
  domain: Type.String({ minLength: 1, description: 'Canonical domain: lowercase ASCII (punycode), no www.' }),
  name: Nullable(Type.String({ minLength: 1, maxLength: ACCOUNT_LIMITS.name })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  latestActivityAt: NullableTimestamp,
};

export const Account = Type.Object(
  {
    ...accountFields,
    linkedPersons: Type.Array(Type.Ref('Person'), {
      description: `The ${ACCOUNT_LIMITS.linkedPersons} most recently created linked persons; linkedPersonsCount says how many there are.`,
    }),
    linkedPersonsCount: Count,
  },
  { $id: 'Account', ...strict },
);

export const AccountSummary = Type.Object(
  { ...accountFields, linkedPersonsCount: Count },
  { $id: 'AccountSummary', ...strict },
);

export const AccountCreateBody = Type.Object(
  {
    domain: Type.String({
      minLength: 1,
      maxLength: ACCOUNT_LIMITS.domainInput,
      description: 'A domain or URL; stored canonical (`https://www.Example.com/x` → `example.com`).',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: ACCOUNT_LIMITS.name })),
  },
  strict,
);

/** `PATCH /v0/accounts/{account_id}` (an extension: docs/api.md, Accounts). */
export const AccountPatchBody = Type.Object(
  {
    name: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: ACCOUNT_LIMITS.name,
          description: 'The company name; null clears it.',
        }),
      ),
    ),
  },
  strict,
);

const IncludeEmptyOnly = Type.Union([Type.Literal('true'), Type.Literal('false')], {
  default: 'false',
  description: '`true` lists only accounts without linked persons.',
});

export const AccountParams = Type.Object({ account_id: ResourceId }, strict);
export const AccountListQuery = Type.Object({ ...PaginationQuery, includeEmptyOnly: IncludeEmptyOnly }, strict);
export const AccountSearchQuery = Type.Object(
  { ...PaginationQuery, includeEmptyOnly: IncludeEmptyOnly, query: SearchText },
  strict,
);

export const AccountList = Envelope(Type.Ref('AccountSummary'), { $id: 'AccountList' });

export type Account = Static<typeof Account>;
export type AccountSummary = Static<typeof AccountSummary>;
export type AccountCreateBody = Static<typeof AccountCreateBody>;
export type AccountPatchBody = Static<typeof AccountPatchBody>;

export const accountSchemas = [Account, AccountSummary];
