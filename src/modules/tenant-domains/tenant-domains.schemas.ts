import { Type, type Static } from '@sinclair/typebox';
import { Envelope, PaginationQuery, ResourceId, Timestamp, strict } from '../../http/schemas.js';

export const TENANT_DOMAINS_TAG = 'Tenant domains (extension)';

/** How many live domains one tenant may have. */
export const MAX_DOMAINS_PER_TENANT = 100;

export const TenantDomain = Type.Object(
  {
    tenantDomainId: Type.String(),
    hostname: Type.String({ description: 'Lowercase; an internationalized name in its ASCII (punycode) form.' }),
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
        'A host name such as pages.acme.com (no scheme, port or path; not an IP address or a single label). ' +
        '*.localhost names work for local use.',
    }),
  },
  strict,
);

export const TenantDomainParams = Type.Object({ tenant_domain_id: ResourceId }, strict);
export const TenantDomainListQuery = Type.Object({ ...PaginationQuery }, strict);
export const TenantDomainList = Envelope(Type.Ref('TenantDomain'), { $id: 'TenantDomainList' });

export type TenantDomain = Static<typeof TenantDomain>;
export type TenantDomainCreateBody = Static<typeof TenantDomainCreateBody>;

export const tenantDomainSchemas = [TenantDomain];
