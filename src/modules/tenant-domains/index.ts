/** What other modules may use of tenant domains: the page router's host names, and domain look-ups. */
export { pageHostsFor, type PageHosts } from './tenant-domains.hosts.js';
export { findTenantDomain } from './tenant-domains.queries.js';
export { createTenantDomain, listTenantDomains } from './tenant-domains.service.js';
export { domainVerifier } from './tenant-domains.verification.js';
