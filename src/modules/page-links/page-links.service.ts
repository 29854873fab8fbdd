import type { Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageLinksTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { conflict, notFound, validationFailed } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { findTenantDomain } from '../tenant-domains/index.js';
import * as q from './page-links.queries.js';
import type { PageLink, PageLinkCreateBody, PageLinkPatchBody } from './page-links.schemas.js';
import { servingChanged } from '../serving/index.js';

function toPageLink(row: q.PageLinkRow): PageLink {
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

/** The first path segment that the page runtime keeps for itself (its script, styles, collection). */
const RESERVED_SEGMENT = '_ap';

/**
 * The canonical form of a link path: one leading slash, no trailing or repeated slashes ("/" is
 * the root). Refused (422): a query or fragment, `.` or `..` segments (also percent-encoded),
 * backslashes, whitespace and control characters, and a first segment `_ap` (the page runtime's).
 * The page server normalizes request paths with the same function. Returns the path or throws.
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
  if (segments[0] !== undefined && safeDecode(segments[0]).toLowerCase() === RESERVED_SEGMENT) {
    throw validationFailed(field, `must not start with /${RESERVED_SEGMENT} (reserved for the page runtime)`);
  }
  return `/${segments.join('/')}`;
}

function pathTaken(path: string, existingId: string) {
  return conflict('page_link_path_taken', `Another page link already uses the path "${path}" on this domain.`, {
    conflictingPageLinkId: existingId,
  });
}

/** A link's domain must be a live domain of the tenant (422), or null for every domain. */
async function checkDomain(tx: TenantScope, tenantDomainId: string | null) {
  if (tenantDomainId !== null && (await findTenantDomain(tx, tenantDomainId)) === undefined) {
    throw validationFailed('/body/tenantDomainId', 'must be the id of one of your domains, or null');
  }
}

/** A link's target must be an active audience of the tenant (422). */
async function checkTarget(tx: TenantScope, audienceId: string) {
  const audience = await q.findAudienceForLink(tx, audienceId);
  if (audience === undefined) {
    throw validationFailed('/body/target/audienceId', 'must be the id of one of your audiences');
  }
  if (audience.archived_at !== null) {
    throw validationFailed('/body/target/audienceId', 'must not be an archived audience');
  }
}

/** The path must be free on its domain (409); `self` is the link being moved, if any. */
async function checkPathFree(tx: TenantScope, domainKey: string, path: string, self: string | null) {
  const other = await q.findLinkAtPath(tx, domainKey, path);
  if (other !== undefined && other.id !== self) throw pathTaken(path, other.id);
}

/** Where a write puts a link: the path it must hold alone on its domain. */
interface PathClaim {
  domainKey: string;
  path: string;
}

/** Rounds of a write that lost a path race to a link that was gone again when we looked. */
const PATH_RACE_ROUNDS = 3;

/**
 * Runs a link write; when it lost a race for a free path (two writes passed `checkPathFree` at
 * once, and the unique index let the first commit win), answers the documented 409 naming the
 * winner, read after the failed transaction. `write` reports the path it claims through `claim`
 * before it writes. If the winner has already moved away or been deleted, the write runs again.
 */
async function writeOnFreePath<R>(scope: TenantScope, write: (claim: (c: PathClaim) => void) => Promise<R>) {
  for (let round = 1; ; round++) {
    let claimed: PathClaim | null = null;
    try {
      return await write((c) => (claimed = c));
    } catch (error) {
      const attempted = claimed as PathClaim | null;
      // Inside a caller's transaction the failed statement has aborted it: nothing more to read.
      if (!isUniqueViolation(error) || attempted === null || scope.inTransaction) throw error;
      const winner = await q.findLinkAtPath(scope, attempted.domainKey, attempted.path);
      if (winner !== undefined) throw pathTaken(attempted.path, winner.id);
      if (round === PATH_RACE_ROUNDS) throw error;
    }
  }
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
  return writeOnFreePath(scope, (claim) =>
    scope.transaction(async (tx) => {
      const row = await q.findPageLink(tx, pageLinkId, { lock: true });
      if (row === undefined) throw notFound('page link', pageLinkId);
      const changes: Updateable<PageLinksTable> = {};

      if (patch.tenantDomainId !== undefined && patch.tenantDomainId !== row.tenant_domain_id) {
        await checkDomain(tx, patch.tenantDomainId);
        changes.tenant_domain_id = patch.tenantDomainId;
        changes.domain_key = patch.tenantDomainId ?? '';
      }
      if (patch.path !== undefined) {
        const path = normalizePath(patch.path);
        if (path !== row.path) changes.path = path;
      }
      if (patch.target !== undefined) {
        await checkTarget(tx, patch.target.audienceId);
        if (patch.target.targetType !== row.target_type) changes.target_type = patch.target.targetType;
        if (patch.target.audienceId !== row.audience_id) changes.audience_id = patch.target.audienceId;
      }
      if (Object.keys(changes).length === 0) return toPageLink(row);

      if (changes.path !== undefined || changes.domain_key !== undefined) {
        const target = {
          domainKey: changes.domain_key ?? row.tenant_domain_id ?? '',
          path: changes.path ?? row.path,
        };
        await checkPathFree(tx, target.domainKey, target.path, pageLinkId);
        claim(target);
      }
      changes.updated_at = isoNow(clock);
      await q.updatePageLink(tx, pageLinkId, changes);
      await servingChanged(tx);
      return toPageLink((await q.findPageLink(tx, pageLinkId))!);
    }),
  );
}

/**
 * Creates a link (extension, docs/api.md): the same validation and normalization as endpoint 20.
 * `tenantDomainId` absent or null: the link serves on every domain of the tenant.
 */
export async function createPageLink(scope: TenantScope, clock: Clock, body: PageLinkCreateBody): Promise<PageLink> {
  const tenantDomainId = body.tenantDomainId ?? null;
  return writeOnFreePath(scope, (claim) =>
    scope.transaction(async (tx) => {
      const path = normalizePath(body.path);
      await checkDomain(tx, tenantDomainId);
      await checkTarget(tx, body.target.audienceId);
      await checkPathFree(tx, tenantDomainId ?? '', path, null);
      claim({ domainKey: tenantDomainId ?? '', path });
      const id = newId('pageLink');
      const now = isoNow(clock);
      await q.insertPageLink(tx, {
        id,
        tenant_domain_id: tenantDomainId,
        domain_key: tenantDomainId ?? '',
        path,
        target_type: body.target.targetType,
        audience_id: body.target.audienceId,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      });
      // A link at a path that a person's key under a parent link answered until now.
      await servingChanged(tx);
      return toPageLink((await q.findPageLink(tx, id))!);
    }),
  );
}

export async function listPageLinks(scope: TenantScope, audienceId: string | null, window: KeysetWindow) {
  const [rows, totalCount] = await Promise.all([
    q.listPageLinks(scope, audienceId, window),
    q.countPageLinks(scope, audienceId),
  ]);
  return { items: rows.map(toPageLink), totalCount };
}

/** Deletes a link (sets `deletedAt`): it stops serving at once and is a 404 everywhere after. */
export async function deletePageLink(scope: TenantScope, clock: Clock, pageLinkId: string): Promise<void> {
  await scope.transaction(async (tx) => {
    const row = await q.findPageLink(tx, pageLinkId, { lock: true });
    if (row === undefined) throw notFound('page link', pageLinkId);
    const now = isoNow(clock);
    await q.updatePageLink(tx, pageLinkId, { deleted_at: now, updated_at: now });
    await servingChanged(tx);
  });
}
