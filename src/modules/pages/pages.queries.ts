import { sql, type Insertable, type Updateable } from 'kysely';
import { forUpdate, substringMatch } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import { preparedQuery } from '../../db/prepared.js';
import type { PagesTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { rowsToFetch, type KeysetWindow } from '../../http/pagination.js';

const PAGE_COLUMNS = [
  'pages.id',
  'pages.name',
  'pages.title',
  'pages.page_context',
  'pages.page_type',
  'pages.status',
  'pages.brand_id',
  'pages.actions',
  'pages.action_card_widgets',
  'pages.footer_links',
  'pages.scripts',
  'pages.header_action_id',
  'pages.metadata',
  'pages.audiences_count',
  'pages.created_at',
  'pages.updated_at',
  'pages.archived_at',
  'pages.deleted_at',
  'pages.status_before_archive',
  'pages.review_before_publish',
] as const;

/** Newest first; ids are time-ordered, so the id alone is the sort key. */
const NEWEST_FIRST = [{ ref: 'pages.id', direction: 'desc' as const }];

export type PageRow = Awaited<ReturnType<typeof findPage>> & {};

function visiblePages(scope: TenantScope) {
  return scope.selectFrom('pages').where('pages.deleted_at', 'is', null);
}

/** The exact number of the tenant's visible pages: one row kept by triggers (migration 0009). */
function visibleCount(scope: TenantScope) {
  return scope.selectFrom('page_counts').select('page_counts.visible');
}

// Listing is the lightest authenticated read and the hottest path: its queries are prepared once
// per limit (a literal LIMIT: see docs/performance.md), and each row carries the exact count, so
// a page and its totalCount are one statement (one round trip on PostgreSQL).
const firstPageOfPages = preparedQuery(
  (scope, p: { limit: number }) =>
    visiblePages(scope)
      .select(PAGE_COLUMNS)
      .select(visibleCount(scope).as('total_count'))
      .orderBy('pages.id', 'desc')
      .limit(sql.lit(p.limit)),
  { literals: ['limit'] },
);
const nextPageOfPages = preparedQuery(
  (scope, p: { limit: number; afterId: string }) =>
    visiblePages(scope)
      .select(PAGE_COLUMNS)
      .select(visibleCount(scope).as('total_count'))
      .where(keysetAfter(NEWEST_FIRST, [p.afterId]))
      .orderBy('pages.id', 'desc')
      .limit(sql.lit(p.limit)),
  { literals: ['limit'] },
);
const countVisiblePages = preparedQuery((scope) => visibleCount(scope));

/**
 * The newest visible pages after the cursor, and the exact count of the tenant's visible pages
 * (read in the same statement, so both come from one snapshot).
 */
export async function listPages(
  scope: TenantScope,
  window: KeysetWindow,
): Promise<{ rows: PageRow[]; totalCount: number }> {
  const limit = rowsToFetch(window, true);
  const rows = window.after
    ? await nextPageOfPages(scope, { limit, afterId: String(window.after[0]) })
    : await firstPageOfPages(scope, { limit });
  if (rows.length === 0) return { rows: [], totalCount: window.after ? await countPages(scope) : 0 };
  // Rows keep their total_count column (toPage reads only its own fields; deleting a property
  // would turn every row into a slow dictionary-mode object).
  return { rows, totalCount: Number(rows[0]!.total_count ?? 0) };
}

export async function countPages(scope: TenantScope): Promise<number> {
  const [row] = await countVisiblePages(scope, {});
  return Number(row?.visible ?? 0);
}

export async function searchPages(scope: TenantScope, text: string, window: KeysetWindow) {
  // Driven from the search index (searchFrom), not by walking the tenant's pages.
  let query = scope
    .searchFrom('pages', text)
    .where('pages.deleted_at', 'is', null)
    .select(['pages.id', 'pages.name', 'pages.audiences_count'])
    .where(substringMatch(scope.engine, 'pages', ['name'], text));
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('pages.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function findPage(scope: TenantScope, pageId: string, options: { lock?: boolean } = {}) {
  const query = visiblePages(scope).select(PAGE_COLUMNS).where('pages.id', '=', pageId);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

export async function updatePage(scope: TenantScope, pageId: string, changes: Updateable<PagesTable>) {
  await scope.updateTable('pages').set(changes).where('pages.id', '=', pageId).execute();
}

export async function insertPage(scope: TenantScope, row: Omit<Insertable<PagesTable>, 'tenant_id'>) {
  await scope.insertInto('pages', row).execute();
}

/** Keeps `audiences_count` in step; call it in the transaction that adds or removes audiences. */
export async function addToAudiencesCount(scope: TenantScope, pageId: string, delta: number) {
  await scope
    .updateTable('pages')
    .set((eb) => ({ audiences_count: eb('pages.audiences_count', '+', delta) }))
    .where('pages.id', '=', pageId)
    .execute();
}
