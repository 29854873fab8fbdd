import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { canonicalHostname } from '../../lib/domain-name.js';
import { newId } from '../../lib/ids.js';
import * as q from './tenant-domains.queries.js';
import { MAX_DOMAINS_PER_TENANT, type TenantDomain, type TenantDomainCreateBody } from './tenant-domains.schemas.js';
import { newClaim, toTenantDomain } from './tenant-domains.verification.js';
import { servingChanged } from '../serving/index.js';

function hostnameTaken(hostname: string) {
  // The same answer whoever holds it: which tenant does is nobody else's business.
  return new AppError('hostname_taken', `The host name "${hostname}" is already registered.`, [
    { path: '/body/hostname', message: 'is already registered' },
  ]);
}

/**
 * The service's own host names: the host of PUBLIC_BASE_URL and API_HOSTNAMES. No tenant may
 * claim them (pages there would hide the API) or any name under them; the TLS `ask` answers for them.
 */
export function serviceHostnames(config: Pick<Config, 'publicBaseUrl' | 'apiHostnames'>): string[] {
  const names = new Set(config.apiHostnames);
  if (config.publicBaseUrl !== null) names.add(new URL(config.publicBaseUrl).hostname.toLowerCase());
  return [...names];
}

/**
 * Whether `hostname` is `own` or a name under it. Names under an IP address or a single label do
 * not count: `localhost` as the API's host must leave every `*.localhost` name claimable.
 */
function isOwnName(hostname: string, own: string): boolean {
  if (hostname === own) return true;
  const hasNamesUnder = own.includes('.') && isIP(own) === 0;
  return hasNamesUnder && hostname.endsWith(`.${own}`);
}

/** The host name as stored, or a 422 at /body/hostname saying why no one may claim it. */
function claimableHostname(input: string, ownHostnames: readonly string[]): string {
  const field = '/body/hostname';
  const result = canonicalHostname(input);
  if (!result.ok) throw validationFailed(field, result.reason);
  const own = ownHostnames.find((name) => isOwnName(result.domain, name));
  if (own !== undefined) {
    throw validationFailed(field, `must not be a host name of this service (${own}) or a name under it`);
  }
  return result.domain;
}

/**
 * Claims a host name for the tenant's pages. The claim is `pending` until proven (a TXT record,
 * tenant-domains.verification.ts); `*.localhost` claims are verified at once. Several tenants may
 * claim one name; 409 `hostname_taken` when someone holds it verified, or this tenant claims it
 * already. The tenant's advisory lock makes the domain cap hold under concurrent claims.
 */
export async function createTenantDomain(
  scope: TenantScope,
  clock: Clock,
  body: TenantDomainCreateBody,
  options: { serviceHostnames: readonly string[] },
): Promise<TenantDomain> {
  const hostname = claimableHostname(body.hostname, options.serviceHostnames);
  try {
    return await scope.transaction(async (tx) => {
      // Without it, two concurrent claims on PostgreSQL could both count 99 and both insert.
      await tx.lock('tenant_domains');
      if ((await q.countTenantDomains(tx)) >= MAX_DOMAINS_PER_TENANT) {
        throw conflict(
          'domain_limit_reached',
          `A tenant may have at most ${MAX_DOMAINS_PER_TENANT} domains; remove one first.`,
        );
      }
      if (await q.hasVerifiedHolder(tx, hostname)) throw hostnameTaken(hostname);
      const id = newId('tenantDomain');
      await q.insertTenantDomain(tx, { id, hostname, created_at: isoNow(clock), ...newClaim(hostname, clock.now()) });
      return toTenantDomain((await q.findTenantDomain(tx, id))!);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw hostnameTaken(hostname);
    throw error;
  }
}

export async function listTenantDomains(scope: TenantScope, window: KeysetWindow) {
  const [rows, totalCount] = await Promise.all([q.listTenantDomains(scope, window), q.countTenantDomains(scope)]);
  return { items: rows.map(toTenantDomain), totalCount };
}

/**
 * Removes a domain and, in the same transaction, deletes its live links: they stop serving at
 * once. The host name is free again (for this tenant or another). Returns the removed host name
 * and whether it was serving.
 */
export async function deleteTenantDomain(
  scope: TenantScope,
  clock: Clock,
  id: string,
): Promise<{ hostname: string; wasServing: boolean }> {
  return scope.transaction(async (tx) => {
    const row = await q.findTenantDomain(tx, id, { lock: true });
    if (row === undefined) throw notFound('tenant domain', id);
    const now = isoNow(clock);
    if (!(await q.markTenantDomainDeleted(tx, id, now))) throw notFound('tenant domain', id);
    await q.deleteLinksOfDomain(tx, id, now);
    await servingChanged(tx);
    return { hostname: row.hostname, wasServing: row.status === 'verified' };
  });
}
