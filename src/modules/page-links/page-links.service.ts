import type { Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageLinksTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import * as q from './page-links.queries.js';
import type { PageLink, PageLinkPatchBody } from './page-links.schemas.js';

export function toPageLink(row: q.PageLinkRow): PageLink {
  return {
    pageLinkId: row.id,
    tenantDomainId: row.tenant_domain_id,
    path: row.path,
    target: { targetType: row.target_type as 'audience', audienceId: row.audience_id },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The canonical form of a link path: one leading slash, no trailing or repeated slashes ("/" is
 * the root). Refused (422): a query or fragment, `.` or `..` segments (also percent-encoded),
 * backslashes, whitespace and control characters. Returns the path or throws.
 */
export function normalizePath(raw: string, field = '/body/path'): string {
  if (/[?#]/.test(raw)) throw validationFailed(field, 'must not contain a query (?) or fragment (#)');
  if (/\s|\\/.test(raw) || [...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    throw validationFailed(field, 'must not contain whitespace, backslashes or control characters');
  }
  const segments = raw.split('/').filter((s) => s !== '');
  if (segments.some((s) => ['.', '..'].includes(safeDecode(s)))) {
    throw validationFailed(field, 'must not contain "." or ".." segments');
  }
  return `/${segments.join('/')}`;
}

function pathTaken(path: string, existingId: string) {
  return conflict('page_link_path_taken', `Another page link already uses the path "${path}" on this domain.`, {
    conflictingPageLinkId: existingId,
  });
}

/**
 * PATCH semantics (docs/api.md, endpoint 20): absent fields are unchanged; the result must be a
 * free path on its domain (409 otherwise) and target an active audience of the tenant (422).
 */
export async function patchPageLink(
  scope: TenantScope,
  clock: Clock,
  pageLinkId: string,
  patch: PageLinkPatchBody,
): Promise<PageLink> {
  try {
    return await scope.transaction(async (tx) => {
      const row = await q.findPageLink(tx, pageLinkId, { lock: true });
      if (row === undefined) throw notFound('page link', pageLinkId);
      const changes: Updateable<PageLinksTable> = {};

      if (patch.tenantDomainId !== undefined && patch.tenantDomainId !== row.tenant_domain_id) {
        if (patch.tenantDomainId !== null && (await q.findTenantDomain(tx, patch.tenantDomainId)) === undefined) {
          throw validationFailed('/body/tenantDomainId', 'must be the id of one of your domains, or null');
        }
        changes.tenant_domain_id = patch.tenantDomainId;
        changes.domain_key = patch.tenantDomainId ?? '';
      }
      if (patch.path !== undefined) {
        const path = normalizePath(patch.path);
        if (path !== row.path) changes.path = path;
      }
      if (patch.target !== undefined) {
        const audience = await q.findAudienceForLink(tx, patch.target.audienceId);
        if (audience === undefined) {
          throw validationFailed('/body/target/audienceId', 'must be the id of one of your audiences');
        }
        if (audience.archived_at !== null) {
          throw validationFailed('/body/target/audienceId', 'must not be an archived audience');
        }
        if (patch.target.targetType !== row.target_type) changes.target_type = patch.target.targetType;
        if (patch.target.audienceId !== row.audience_id) changes.audience_id = patch.target.audienceId;
      }
      if (Object.keys(changes).length === 0) return toPageLink(row);

      if (changes.path !== undefined || changes.domain_key !== undefined) {
        const domainKey = changes.domain_key ?? row.tenant_domain_id ?? '';
        const path = changes.path ?? row.path;
        const other = await q.findLinkAtPath(tx, domainKey, path);
        if (other !== undefined && other.id !== pageLinkId) throw pathTaken(path, other.id);
      }
      changes.updated_at = isoNow(clock);
      await q.updatePageLink(tx, pageLinkId, changes);
      return toPageLink((await q.findPageLink(tx, pageLinkId))!);
    });
  } catch (error) {
    // Two links moved to the same free path at once: the unique index decides.
    if (isUniqueViolation(error)) {
      throw new AppError('page_link_path_taken', 'Another page link already uses this path on this domain.', [], 409);
    }
    throw error;
  }
}

export interface NewPageLink {
  tenantDomainId: string | null;
  path: string;
  audienceId: string;
}

/** Page links are created by the operator side (demo, imports). */
export async function createPageLink(scope: TenantScope, clock: Clock, input: NewPageLink): Promise<string> {
  const id = newId('pageLink');
  const now = isoNow(clock);
  await q.insertPageLink(scope, {
    id,
    tenant_domain_id: input.tenantDomainId,
    domain_key: input.tenantDomainId ?? '',
    path: normalizePath(input.path),
    target_type: 'audience',
    audience_id: input.audienceId,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  });
  return id;
}

export async function createTenantDomain(scope: TenantScope, clock: Clock, hostname: string): Promise<string> {
  const id = newId('tenantDomain');
  await q.insertTenantDomain(scope, { id, hostname: hostname.toLowerCase(), created_at: isoNow(clock) });
  return id;
}
