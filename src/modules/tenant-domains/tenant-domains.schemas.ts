import { Type, type Static } from '@sinclair/typebox';
import {
  Envelope,
  Nullable,
  NullableTimestamp,
  PaginationQuery,
  ResourceId,
  StringEnum,
  Timestamp,
  strict,
} from '../../http/schemas.js';

const described = <T extends object>(schema: T, description: string): T => ({ ...schema, description });

export const TENANT_DOMAINS_TAG = 'Tenant domains (extension)';

/** How many live domains (claims of any status) one tenant may have. */
export const MAX_DOMAINS_PER_TENANT = 100;

const TENANT_DOMAIN_STATUSES = ['pending', 'verified', 'expired', 'superseded'] as const;

const CHECK_RESULTS = ['found', 'no_record', 'other_values', 'dns_error'] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];

const DomainVerification = Type.Object(
  {
    type: StringEnum(['TXT'] as const),
    name: Type.String({ description: 'Where to publish the record: `_audience-pages-challenge.<hostname>`.' }),
    value: Type.String({
      description: 'The record’s exact value: `audience-pages-verification=<token of this claim>`.',
    }),
  },
  {
    ...strict,
    description: 'The DNS record that proves the claim. Keep it published: verified domains are re-checked.',
  },
);

const DomainCheck = Type.Object(
  {
    checkedAt: Timestamp,
    result: StringEnum(CHECK_RESULTS),
    detail: Type.String({ description: 'What the check found, in words (the values found, the DNS error).' }),
  },
  strict,
);

export const TenantDomain = Type.Object(
  {
    tenantDomainId: Type.String(),
    hostname: Type.String({ description: 'Lowercase; an internationalized name in its ASCII (punycode) form.' }),
    status: StringEnum(TENANT_DOMAIN_STATUSES, {
      description:
        'pending: claimed, waiting for its proof (checked again and again until `pendingUntil`); verified: proven, ' +
        'serves pages; expired: not proven in time, no longer checked (POST …/verify checks again); superseded: ' +
        'another tenant proved this host name first, the claim has ended. Only verified domains serve pages.',
    }),
    verification: DomainVerification,
    verifiedAt: described(
      NullableTimestamp,
      'When the claim was proven; null while it never was (also for a domain registered before proofs existed).',
    ),
    lastCheck: Nullable(DomainCheck),
    nextCheckAt: described(NullableTimestamp, 'When the service checks the record next; null: no check is planned.'),
    pendingUntil: described(NullableTimestamp, 'A pending claim is checked until then, and expires after.'),
    stopsServingAt: described(
      NullableTimestamp,
      'A verified domain whose record was not found: it stops serving then, unless a check finds the record again.',
    ),
    createdAt: Timestamp,
  },
  { $id: 'TenantDomain', ...strict },
);

export const TenantDomainCreateBody = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'A host name such as pages.acme.com (no scheme, port or path; not an IP address, a single label, a ' +
        'special-use name or a public suffix). *.localhost names work for local use, verified at once.',
    }),
  },
  strict,
);

export const TenantDomainParams = Type.Object({ tenant_domain_id: ResourceId }, strict);
export const TenantDomainListQuery = Type.Object({ ...PaginationQuery }, strict);
export const TenantDomainList = Envelope(Type.Ref('TenantDomain'), { $id: 'TenantDomainList' });

export type TenantDomain = Static<typeof TenantDomain>;
export type DomainVerification = Static<typeof DomainVerification>;
export type TenantDomainCreateBody = Static<typeof TenantDomainCreateBody>;

export const tenantDomainSchemas = [TenantDomain];
