import type { Updateable } from 'kysely';
import { json } from '../../db/json.js';
import type { PagesTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { publishPageDrafts } from '../audiences/index.js';
import { servingChanged } from '../serving/index.js';
import * as q from './pages.queries.js';
import {
  DEFAULT_BRAND_ID,
  PAGE_LIMITS,
  type Metadata,
  type Page,
  type PageCreateBody,
  type PagePatchBody,
  type PageSearchItem,
  type PageStatus,
  type PageType,
} from './pages.schemas.js';

/** The create body without its idempotency key. */
export type PageCreateInput = Omit<PageCreateBody, 'idempotencyKey'>;

/** An action as stored: its position in the array is its `actionIndex`. */
interface StoredAction {
  actionId: string;
  purpose: string;
  buttonTitle: string;
  actionType: string;
  url: string;
}

function toPage(row: q.PageRow): Page {
  const actions = row.actions as StoredAction[];
  const page: Page = {
    pageId: row.id,
    name: row.name,
    title: row.title,
    pageContext: row.page_context,
    pageType: row.page_type as PageType,
    status: row.status as PageStatus,
    brandId: row.brand_id,
    actions: actions.map((a, actionIndex) => ({
      actionId: a.actionId,
      actionIndex,
      purpose: a.purpose,
      buttonTitle: a.buttonTitle,
      actionType: a.actionType,
      url: a.url,
    })),
    actionCardWidgets: row.action_card_widgets as Page['actionCardWidgets'],
    footerLinks: row.footer_links as Page['footerLinks'],
    scripts: row.scripts as Page['scripts'],
    audiencesCount: row.audiences_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    archivedAt: row.archived_at,
    deletedAt: row.deleted_at,
    metadata: row.metadata as Metadata,
    reviewBeforePublish: Boolean(row.review_before_publish),
  };
  if (row.header_action_id !== null) page.headerActionId = row.header_action_id;
  return page;
}

export async function listPages(scope: TenantScope, window: KeysetWindow) {
  const { rows, totalCount } = await q.listPages(scope, window);
  return { items: rows.map(toPage), totalCount };
}

/** Search results carry no total (docs/api.md, search): counting every match would cost more than finding a page. */
export async function searchPages(scope: TenantScope, text: string, window: KeysetWindow) {
  const rows = await q.searchPages(scope, text, window);
  const items: PageSearchItem[] = rows.map((r) => ({ pageId: r.id, name: r.name, audiencesCount: r.audiences_count }));
  return { items, totalCount: null };
}

/** The page, locked for the transaction; 404 when unknown, another tenant's or deleted. */
async function lockedPage(tx: TenantScope, pageId: string): Promise<q.PageRow> {
  const row = await q.findPage(tx, pageId, { lock: true });
  if (row === undefined) throw notFound('page', pageId);
  return row;
}

function pageArchived(pageId: string): AppError {
  return conflict('page_archived', `Page "${pageId}" is archived and cannot be changed.`);
}

export async function getPage(scope: TenantScope, pageId: string): Promise<Page> {
  const row = await q.findPage(scope, pageId);
  if (row === undefined) throw notFound('page', pageId);
  return toPage(row);
}

/**
 * `POST /v0/pages` (docs/api.md, Creating a page): a `draft` page whose `title` defaults to its
 * name and whose other fields are applied by the PATCH code (`applyPatch`), so that both accept
 * and refuse exactly the same things, the 256 KiB rule included. Run it in the transaction of
 * the idempotency key.
 */
export async function createPageFromApi(tx: TenantScope, clock: Clock, body: PageCreateInput): Promise<Page> {
  const { title, ...patch } = body;
  const now = isoNow(clock);
  const id = newId('page');
  await q.insertPage(tx, {
    id,
    name: body.name,
    title: title ?? body.name,
    page_context: body.pageContext,
    page_type: body.pageType,
    status: 'draft',
    brand_id: body.brandId ?? DEFAULT_BRAND_ID,
    actions: json([]),
    action_card_widgets: json([]),
    footer_links: json([]),
    scripts: json([]),
    header_action_id: null,
    metadata: json({}),
    audiences_count: 0,
    created_at: now,
    updated_at: now,
    archived_at: null,
    deleted_at: null,
  });
  const row = (await q.findPage(tx, id, { lock: true }))!;
  // Measured even when the patch changed nothing (a brief alone can pass the limit).
  return withinSizeLimit(await applyPatch(tx, clock, row, patch));
}

/**
 * The page status table (docs/api.md, The life of a page): `draft` → `published` (and its
 * audiences' drafts go live), `draft`/`published` → `archived` (its links stop serving: 410),
 * `archived` → restore → the status it was archived from. Every other move is a 409 and changes
 * nothing. Each move that alters what a link serves tells the page cache (`servingChanged`).
 */
export async function publishPage(scope: TenantScope, clock: Clock, pageId: string): Promise<Page> {
  return scope.transaction(async (tx) => {
    const row = await lockedPage(tx, pageId);
    if (row.status === 'archived') throw pageArchived(pageId);
    if (row.status === 'published') {
      throw conflict('page_already_published', `Page "${pageId}" is already published.`);
    }
    await q.updatePage(tx, pageId, { status: 'published', updated_at: isoNow(clock) });
    // What `page publish-drafts` does: every audience's waiting draft goes live (and the cache hears of it).
    await publishPageDrafts(tx, clock, pageId);
    await servingChanged(tx);
    return toPage((await q.findPage(tx, pageId))!);
  });
}

export async function archivePage(scope: TenantScope, clock: Clock, pageId: string): Promise<Page> {
  return scope.transaction(async (tx) => {
    const row = await lockedPage(tx, pageId);
    if (row.status === 'archived') {
      throw conflict('page_archived', `Page "${pageId}" is already archived.`);
    }
    const now = isoNow(clock);
    await q.updatePage(tx, pageId, {
      status: 'archived',
      status_before_archive: row.status,
      archived_at: now,
      updated_at: now,
    });
    await servingChanged(tx);
    return toPage((await q.findPage(tx, pageId))!);
  });
}

export async function restorePage(scope: TenantScope, clock: Clock, pageId: string): Promise<Page> {
  return scope.transaction(async (tx) => {
    const row = await lockedPage(tx, pageId);
    if (row.status !== 'archived') {
      throw conflict('page_not_archived', `Page "${pageId}" is not archived; only an archived page can be restored.`);
    }
    // Pages archived before the status was remembered (migration 0070) come back as drafts.
    const status: PageStatus = row.status_before_archive === 'published' ? 'published' : 'draft';
    await q.updatePage(tx, pageId, {
      status,
      status_before_archive: null,
      archived_at: null,
      updated_at: isoNow(clock),
    });
    // A published page again publishes what was generated for it while it was archived, as it
    // would have, had it not been archived.
    if (status === 'published') await publishPageDrafts(tx, clock, pageId);
    await servingChanged(tx);
    return toPage((await q.findPage(tx, pageId))!);
  });
}

/**
 * `DELETE /v0/pages/{page_id}`: `deletedAt` is set and the page is gone everywhere (404, lists,
 * search, counts; its links answer 404 from the next request on). Deleting is final over the API.
 */
export async function deletePage(scope: TenantScope, clock: Clock, pageId: string): Promise<void> {
  await scope.transaction(async (tx) => {
    await lockedPage(tx, pageId);
    const now = isoNow(clock);
    await q.updatePage(tx, pageId, { deleted_at: now, updated_at: now });
    await servingChanged(tx);
  });
}

/**
 * PATCH semantics (docs/api.md, endpoint 3): absent fields are unchanged; arrays are replaced as a
 * whole; `metadata` is merged key by key and `null` removes a key; the resulting `headerActionId`
 * must be null or the id of one of the resulting actions. Archived pages are read-only.
 */
export async function patchPage(scope: TenantScope, clock: Clock, pageId: string, patch: PagePatchBody): Promise<Page> {
  return scope.transaction(async (tx) => {
    const row = await lockedPage(tx, pageId);
    if (row.status === 'archived') throw pageArchived(pageId);
    return applyPatch(tx, clock, row, patch);
  });
}

/**
 * The one code path of PATCH and create (docs/api.md, Creating a page): validates `patch` against
 * the locked `row`, writes it and returns the page as stored, within the 256 KiB rule (over it,
 * it throws and the caller's transaction rolls back).
 */
async function applyPatch(tx: TenantScope, clock: Clock, row: q.PageRow, patch: PagePatchBody): Promise<Page> {
  const pageId = row.id;
  const changes: Updateable<PagesTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.pageContext !== undefined) changes.page_context = patch.pageContext;
  if (patch.pageType !== undefined) changes.page_type = patch.pageType;
  if (patch.brandId !== undefined) changes.brand_id = patch.brandId;
  if (patch.actionCardWidgets !== undefined) changes.action_card_widgets = json(patch.actionCardWidgets);
  if (patch.footerLinks !== undefined) changes.footer_links = json(patch.footerLinks);
  if (patch.scripts !== undefined) changes.scripts = json(patch.scripts);
  if (patch.reviewBeforePublish !== undefined) changes.review_before_publish = patch.reviewBeforePublish;

  let actions = row.actions as StoredAction[];
  if (patch.actions !== undefined) {
    actions = patch.actions.map((a) => ({
      actionId: a.actionId ?? newId('action'),
      purpose: a.purpose,
      buttonTitle: a.buttonTitle,
      actionType: a.actionType,
      url: a.url,
    }));
    const seen = new Set<string>();
    actions.forEach((a, i) => {
      if (seen.has(a.actionId)) throw validationFailed(`/body/actions/${i}/actionId`, 'must be unique within the page');
      seen.add(a.actionId);
    });
    changes.actions = json(actions);
  }

  const headerActionId = patch.headerActionId !== undefined ? patch.headerActionId : row.header_action_id;
  if (headerActionId !== null && !actions.some((a) => a.actionId === headerActionId)) {
    throw new AppError('validation_failed', `headerActionId "${headerActionId}" is not one of the page's actions.`, [
      {
        path: patch.headerActionId !== undefined ? '/body/headerActionId' : '/body/actions',
        message:
          patch.headerActionId !== undefined
            ? 'must be the actionId of one of the page actions'
            : 'must keep the action named by headerActionId (or set headerActionId too)',
      },
    ]);
  }
  if (patch.headerActionId !== undefined) changes.header_action_id = patch.headerActionId;

  if (patch.metadata !== undefined) {
    const merged: Record<string, unknown> = { ...(row.metadata as Record<string, unknown>) };
    for (const [key, value] of Object.entries(patch.metadata)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    changes.metadata = json(merged);
  }

  if (Object.keys(changes).length === 0) return toPage(row);
  changes.updated_at = isoNow(clock);
  await q.updatePage(tx, pageId, changes);
  // Measured on the page as stored and returned; too large, and the transaction rolls back.
  return withinSizeLimit(toPage((await q.findPage(tx, pageId))!));
}

function withinSizeLimit(page: Page): Page {
  const bytes = Buffer.byteLength(JSON.stringify(page));
  if (bytes > PAGE_LIMITS.pageJsonBytes) {
    const message = `would make the page ${bytes} bytes of JSON; a page is at most ${PAGE_LIMITS.pageJsonBytes} bytes`;
    throw new AppError('page_too_large', `The request is invalid: /body ${message}.`, [{ path: '/body', message }]);
  }
  return page;
}

export interface NewPage {
  name: string;
  title: string;
  pageContext: string;
  pageType: PageType;
  status: PageStatus;
  brandId: string;
  actions?: Omit<StoredAction, 'actionId'>[];
  actionCardWidgets?: Page['actionCardWidgets'];
  footerLinks?: Page['footerLinks'];
  scripts?: Page['scripts'];
  metadata?: Metadata;
  /** Index into `actions` of the header action. */
  headerActionIndex?: number;
  deleted?: boolean;
  reviewBeforePublish?: boolean;
}

/** A page made by the operator side (demo, tests); the API's create is `createPageFromApi`. */
export async function createPage(scope: TenantScope, clock: Clock, input: NewPage): Promise<string> {
  const now = isoNow(clock);
  const actions = (input.actions ?? []).map((a) => ({ actionId: newId('action'), ...a }));
  const page: q.PageRow = {
    id: newId('page'),
    name: input.name,
    title: input.title,
    page_context: input.pageContext,
    page_type: input.pageType,
    status: input.status,
    brand_id: input.brandId,
    actions,
    action_card_widgets: input.actionCardWidgets ?? [],
    footer_links: input.footerLinks ?? [],
    scripts: input.scripts ?? [],
    header_action_id:
      input.headerActionIndex !== undefined ? (actions[input.headerActionIndex]?.actionId ?? null) : null,
    metadata: input.metadata ?? {},
    audiences_count: 0,
    created_at: now,
    updated_at: now,
    archived_at: input.status === 'archived' ? now : null,
    deleted_at: input.deleted ? now : null,
    status_before_archive: null,
    review_before_publish: input.reviewBeforePublish ?? false,
  };
  withinSizeLimit(toPage(page));
  await q.insertPage(scope, {
    ...page,
    actions: json(page.actions),
    action_card_widgets: json(page.action_card_widgets),
    footer_links: json(page.footer_links),
    scripts: json(page.scripts),
    metadata: json(page.metadata),
  });
  return page.id;
}
