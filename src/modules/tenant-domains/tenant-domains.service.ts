import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { canonicalHostname } from '../../lib/domain-name.js';
import { newId } from '../../lib/ids.js';
import * as q from './tenant-domains.queries.js';
import { MAX_DOMAINS_PER_TENANT, type TenantDomain, type TenantDomainCreateBody } from './tenant-domains.schemas.js';

function toTenantDomain(row: q.TenantDomainRow): TenantDomain {
  return { tenantDomainId: row.id, hostname: row.hostname, createdAt: row.created_at };
}

function hostnameTaken(hostname: string) {
  // The same answer whoever holds it: which tenant does is nobody else's business.
  return new AppError('hostname_taken', `The host name "${hostname}" is already registered.`, [
    { path: '/body/hostname', message: 'is already registered' },
  ]);
}

/** The service's own host name (PUBLIC_BASE_URL), which no tenant may take. */
export function apiHostname(publicBaseUrl: string | null): string | null {
  return publicBaseUrl === null ? null : new URL(publicBaseUrl).hostname;
}

/**
 * The host name as stored, or a 422 at /body/hostname. `apiHostname` is the service's own host
 * (PUBLIC_BASE_URL): pages there would hide the API.
 */
function validHostname(input: string, apiHostname: string | null, field = '/body/hostname'): string {
  const result = canonicalHostname(input);
  if (!result.ok) throw validationFailed(field, result.reason);
  if (apiHostname !== null && result.domain === apiHostname.toLowerCase()) {
    throw validationFailed(field, 'must not be the host name of the API itself');
  }
  return result.domain;
}

/**
 * Registers a host name for the tenant. A host name belongs to one tenant in the whole service:
 * taken by anyone, this tenant included, it is a 409 `hostname_taken` (the unique index on live
 * host names decides between concurrent requests).
 */
export async function createTenantDomain(
  scope: TenantScope,
  clock: Clock,
  body: TenantDomainCreateBody,
  options: { apiHostname: string | null },
): Promise<TenantDomain> {
  const hostname = validHostname(body.hostname, options.apiHostname);
  try {
    return await scope.transaction(async (tx) => {
      if ((await q.countTenantDomains(tx)) >= MAX_DOMAINS_PER_TENANT) {
        throw conflict(
          'domain_limit_reached',
          `A tenant may have at most ${MAX_DOMAINS_PER_TENANT} domains; remove one first.`,
        );
      }
      const id = newId('tenantDomain');
      await q.insertTenantDomain(tx, { id, hostname, created_at: isoNow(clock) });
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
 * once. The host name is free again (for this tenant or another). Returns the removed host name.
 */
export async function deleteTenantDomain(scope: TenantScope, clock: Clock, id: string): Promise<string> {
  return scope.transaction(async (tx) => {
    const row = await q.findTenantDomain(tx, id);
    if (row === undefined) throw notFound('tenant domain', id);
    const now = isoNow(clock);
    if (!(await q.markTenantDomainDeleted(tx, id, now))) throw notFound('tenant domain', id);
    await q.deleteLinksOfDomain(tx, id, now);
    return row.hostname;
  });
}
