import type { Insertable, Updateable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { PageLinksTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const LINK_COLUMNS = [
  'page_links.id',
  'page_links.tenant_domain_id',
  'page_links.path',
  'page_links.target_type',
  'page_links.audience_id',
  'page_links.created_at',
  'page_links.updated_at',
  'page_links.deleted_at',
] as const;

const NEWEST_FIRST = [{ ref: 'page_links.id', direction: 'desc' as const }];

export type PageLinkRow = Awaited<ReturnType<typeof findPageLink>> & {};

export async function findPageLink(scope: TenantScope, id: string, options: { lock?: boolean } = {}) {
  const query = scope
    .selectFrom('page_links')
    .select(LINK_COLUMNS)
    .where('page_links.id', '=', id)
    .where('page_links.deleted_at', 'is', null);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

function live(scope: TenantScope, audienceId: string | null) {
  let query = scope.selectFrom('page_links').where('page_links.deleted_at', 'is', null);
  if (audienceId !== null) query = query.where('page_links.audience_id', '=', audienceId);
  return query;
}

/** Live links, newest first; with an audience, a range of the index page_links_audience. */
export async function listPageLinks(scope: TenantScope, audienceId: string | null, window: KeysetWindow) {
  let query = live(scope, audienceId).select(LINK_COLUMNS);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('page_links.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countPageLinks(scope: TenantScope, audienceId: string | null): Promise<number> {
  const row = await live(scope, audienceId)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The live link at a path of a domain (`domainKey` = tenant domain id, or '' for none). */
export async function findLinkAtPath(scope: TenantScope, domainKey: string, path: string) {
  return scope
    .selectFrom('page_links')
    .select('page_links.id')
    .where('page_links.domain_key', '=', domainKey)
    .where('page_links.path', '=', path)
    .where('page_links.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function updatePageLink(scope: TenantScope, id: string, changes: Updateable<PageLinksTable>) {
  await scope.updateTable('page_links').set(changes).where('page_links.id', '=', id).execute();
}

export async function insertPageLink(scope: TenantScope, row: Omit<Insertable<PageLinksTable>, 'tenant_id'>) {
  await scope.insertInto('page_links', row).execute();
}

/** The audience, if its page is not deleted: a deleted page's audiences are invisible everywhere. */
export async function findAudienceForLink(scope: TenantScope, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .innerJoin('pages', (join) =>
      join.onRef('pages.id', '=', 'audiences.page_id').onRef('pages.tenant_id', '=', 'audiences.tenant_id'),
    )
    .select(['audiences.id', 'audiences.archived_at'])
    .where('audiences.id', '=', audienceId)
    .where('pages.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Audiences with what the demo names their links by (page type, route key). */
export async function audiencesForDemo(scope: TenantScope, audienceIds: string[]) {
  if (audienceIds.length === 0) return [];
  return scope
    .selectFrom('audiences')
    .innerJoin('pages', 'pages.id', 'audiences.page_id')
    .select([
      'audiences.id',
      'audiences.page_id',
      'audiences.person_route_key',
      'audiences.archived_at',
      'pages.page_type',
      'pages.status',
    ])
    .where('audiences.id', 'in', audienceIds)
    .orderBy('audiences.id')
    .execute();
}
