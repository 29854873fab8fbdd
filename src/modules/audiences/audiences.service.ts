import type { Updateable } from 'kysely';
import { randomBytes } from 'node:crypto';
import { json } from '../../db/json.js';
import type { AudiencesTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { findAccount, findAccountByDomain } from '../accounts/index.js';
import { addToAudiencesCount, type Metadata, type MetadataPatch } from '../pages/index.js';
import { findPerson } from '../persons/index.js';
import * as q from './audiences.queries.js';
import {
  AUDIENCE_LIMITS,
  type Audience,
  type AudienceCreateBody,
  type AudiencePatchBody,
} from './audiences.schemas.js';
import { audienceArchived, pageArchived, visiblePage } from './audiences.checks.js';
import { toAudience, toVersion } from './audiences.mapping.js';
import { generateNow } from './audiences.generation.js';
import type { VersionGenerator } from './audiences.generator.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { createVersionIn } from './audiences.versions.js';
import { servingChanged } from '../serving/index.js';

/** Audiences with their latest and published versions, read in one query for all of them. */
async function withVersions(scope: TenantScope, rows: q.AudienceRow[], pageMetadata: Record<string, unknown>) {
  const versions = await q.currentVersions(
    scope,
    rows.map((r) => r.id),
  );
  const latest = new Map<string, q.VersionRow>();
  const published = new Map<string, q.VersionRow>();
  for (const v of versions) {
    const known = latest.get(v.audience_id);
    if (known === undefined || Number(known.version_number) < Number(v.version_number)) latest.set(v.audience_id, v);
    if (v.status === 'published') published.set(v.audience_id, v);
  }
  return rows.map((row) => {
    const l = latest.get(row.id);
    const p = published.get(row.id);
    // Every audience is created with a published first version and a version is only retired
    // when another is published in the same transaction: a missing one is a broken invariant.
    if (l === undefined || p === undefined) throw new Error(`audience ${row.id} has no latest or published version`);
    return toAudience(row, pageMetadata, toVersion(l), toVersion(p));
  });
}

export async function listAudiences(scope: TenantScope, pageId: string, window: KeysetWindow) {
  const pageRow = await visiblePage(scope, pageId);
  const [rows, totalCount] = await Promise.all([
    q.listAudiences(scope, pageId, window),
    q.countAudiences(scope, pageId),
  ]);
  return { items: await withVersions(scope, rows, pageRow.metadata), totalCount };
}

export async function getAudience(scope: TenantScope, pageId: string, audienceId: string): Promise<Audience> {
  const pageRow = await visiblePage(scope, pageId);
  const row = await q.findAudience(scope, pageId, audienceId);
  if (row === undefined) throw notFound('audience', audienceId);
  const [audience] = await withVersions(scope, [row], pageRow.metadata);
  return audience!;
}

/**
 * Restore (endpoint 5): an archived audience gets `archivedAt` cleared, and its status is again
 * the status of its latest version (which archiving never touched). Restoring an audience that
 * is not archived changes nothing and answers it as it is. The page must not be archived.
 */
export async function restoreAudience(scope: TenantScope, pageId: string, audienceId: string): Promise<Audience> {
  return scope.transaction(async (tx) => {
    const row = await lockAudienceOnOpenPage(tx, pageId, audienceId);
    if (row.archived_at !== null) {
      await q.setAudienceArchivedAt(tx, audienceId, null);
      await servingChanged(tx);
    }
    return getAudience(tx, pageId, audienceId);
  });
}

/** Archives an audience (operator side: CLI, demo, tests). Its versions are left as they are. */
export async function archiveAudience(scope: TenantScope, clock: Clock, audienceId: string): Promise<void> {
  await scope.transaction(async (tx) => {
    const row = await q.findAudienceById(tx, audienceId);
    if (row === undefined) throw notFound('audience', audienceId);
    if (row.archived_at === null) {
      await q.setAudienceArchivedAt(tx, audienceId, isoNow(clock));
      await servingChanged(tx);
    }
  });
}

/**
 * Archive over the API (the pair of restore): `archivedAt` is set, the versions are left as they
 * are, and the audience's links stop serving at once (410, or 404 when reached by its key). An
 * audience already archived answers as it is. Not on an archived page (409 `page_archived`).
 */
export async function archiveAudienceOnPage(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  audienceId: string,
): Promise<Audience> {
  return scope.transaction(async (tx) => {
    const row = await lockAudienceOnOpenPage(tx, pageId, audienceId);
    if (row.archived_at === null) {
      await q.setAudienceArchivedAt(tx, audienceId, isoNow(clock));
      await servingChanged(tx);
    }
    return getAudience(tx, pageId, audienceId);
  });
}

/** The audience's row, locked, on a page that is neither deleted nor archived (404, 409 `page_archived`). */
async function lockAudienceOnOpenPage(tx: TenantScope, pageId: string, audienceId: string) {
  const page = await visiblePage(tx, pageId);
  const row = await q.findAudience(tx, pageId, audienceId, { lock: true });
  if (row === undefined) throw notFound('audience', audienceId);
  if (page.status === 'archived') throw pageArchived(pageId);
  return row;
}

/** The page's metadata override changes applied to the stored override: `null` removes a key. */
function mergeMetadata(stored: Record<string, unknown> | null, patch: MetadataPatch): Metadata | null {
  const merged: Record<string, unknown> = { ...(stored ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return Object.keys(merged).length === 0 ? null : (merged as Metadata);
}

/**
 * PATCH (extension): absent fields are unchanged, `null` clears a field, `metadataOverride` is
 * merged key by key like the page's `metadata` (`null` removes a key). `customName` is the
 * audience's name at once; everything else is content, which the audience's next version carries
 * (a version keeps `supplementaryContext` and `isNewPageAgent` as they were when it was made).
 * A PATCH queues no version by itself: endpoint 6 or regenerate does, once the edits are done.
 */
export async function patchAudience(
  scope: TenantScope,
  pageId: string,
  audienceId: string,
  patch: AudiencePatchBody,
): Promise<Audience> {
  return scope.transaction(async (tx) => {
    const row = await lockAudienceOnOpenPage(tx, pageId, audienceId);
    if (row.archived_at !== null) throw audienceArchived(audienceId);
    const changes: Updateable<AudiencesTable> = {};
    if (patch.customName !== undefined) changes.custom_name = patch.customName;
    if (patch.supplementaryContext !== undefined) changes.supplementary_context = patch.supplementaryContext;
    if (patch.actionUrlOverride !== undefined) changes.action_url_override = patch.actionUrlOverride;
    if (patch.actionFormIdOverride !== undefined) changes.action_form_id_override = patch.actionFormIdOverride;
    if (patch.actionFormInstructionsOverride !== undefined) {
      changes.action_form_instructions_override = patch.actionFormInstructionsOverride;
    }
    if (patch.isNewPageAgent !== undefined) changes.is_new_page_agent = patch.isNewPageAgent;
    if (patch.metadataOverride !== undefined) {
      const merged = mergeMetadata(row.metadata_override, patch.metadataOverride);
      changes.metadata_override = merged === null ? null : json(merged);
    }
    if (Object.keys(changes).length > 0) await q.updateAudience(tx, audienceId, changes);
    return getAudience(tx, pageId, audienceId);
  });
}

export interface NewAudience {
  pageId: string;
  computedName: string;
  customName?: string | null;
  isNewPageAgent?: boolean;
  personId?: string | null;
  accountId?: string | null;
  personRouteKey?: string | null;
  actionFormIdOverride?: string | null;
  actionFormInstructionsOverride?: string | null;
  actionUrlOverride?: string | null;
  supplementaryContext?: string | null;
  metadataOverride?: Metadata | null;
}

/**
 * Inserts an audience with its first version generated (by `generator`, the built-in writer by
 * default) and published in the same transaction, so that every audience has a real published
 * version from its first moment. The first version goes through the same lifecycle as every
 * other one (queued → processing → draft → published) and emits the same events. Operator side
 * (demo data, benchmarks, test factories): no checks of the input; `createAudience` is the API's.
 */
export async function seedAudience(
  scope: TenantScope,
  clock: Clock,
  input: NewAudience,
  generator: VersionGenerator = builtinWriter,
): Promise<{ audienceId: string; versionId: string }> {
  return scope.transaction(async (tx) => {
    await visiblePage(tx, input.pageId, { lock: true });
    return insertSeededAudience(tx, clock, input, generator);
  });
}

/** seedAudience's writes, inside `tx` whose caller holds the page's lock. */
async function insertSeededAudience(
  tx: TenantScope,
  clock: Clock,
  input: NewAudience,
  generator: VersionGenerator,
): Promise<{ audienceId: string; versionId: string }> {
  const audienceId = newId('audience');
  await q.insertAudience(tx, {
    id: audienceId,
    page_id: input.pageId,
    computed_name: input.computedName,
    custom_name: input.customName ?? null,
    is_new_page_agent: input.isNewPageAgent ?? false,
    person_id: input.personId ?? null,
    account_id: input.accountId ?? null,
    person_route_key: input.personRouteKey ?? null,
    action_form_id_override: input.actionFormIdOverride ?? null,
    action_form_instructions_override: input.actionFormInstructionsOverride ?? null,
    action_url_override: input.actionUrlOverride ?? null,
    supplementary_context: input.supplementaryContext ?? null,
    metadata_override: input.metadataOverride ? json(input.metadataOverride) : null,
    created_at: isoNow(clock),
  });
  await addToAudiencesCount(tx, input.pageId, 1);
  const version = await createVersionIn(tx, clock, { pageId: input.pageId, audienceId, operationKey: null });
  const step = await generateNow(tx, clock, version.versionId, { generator, publish: true });
  if (step.outcome !== 'completed' || step.completion !== 'published') {
    throw new Error(`the first version of the audience was not published: ${step.outcome}`);
  }
  return { audienceId, versionId: version.versionId };
}

/** What an audience created over the API addresses and carries (the create body without its key). */
export type AudienceInput = Omit<AudienceCreateBody, 'idempotencyKey'>;

/** A random, unguessable person route key: 128 bits, 22 base64url characters. */
function randomRouteKey(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * The audience's computed name from whom it addresses: the person's name (else email) with their
 * company (`Sam Lee · Globex`), the account's name (else domain), or, for a named segment, its
 * `customName`. Refuses a person or an account that is not the tenant's (422, at its field).
 */
async function addressee(
  tx: TenantScope,
  input: AudienceInput,
): Promise<{ computedName: string; personId: string | null; accountId: string | null }> {
  const personId = input.personId ?? null;
  const accountId = input.accountId ?? null;
  if (personId !== null && accountId !== null) {
    throw validationFailed('/body/accountId', 'must be omitted when personId is given (an audience addresses one)');
  }
  if (personId !== null) {
    const person = await findPerson(tx, personId);
    if (person === undefined) throw validationFailed('/body/personId', 'must be the personId of a person of yours');
    const account = person.account_domain ? await findAccountByDomain(tx, person.account_domain) : undefined;
    const name = person.name.trim() || person.email || personId;
    const company = account?.name ?? person.account_domain;
    return { computedName: clip(company ? `${name} · ${company}` : name), personId, accountId: null };
  }
  if (accountId !== null) {
    const account = await findAccount(tx, accountId);
    if (account === undefined)
      throw validationFailed('/body/accountId', 'must be the accountId of an account of yours');
    return { computedName: clip(account.name ?? account.domain), personId: null, accountId };
  }
  if (input.customName === undefined || input.customName === null) {
    throw validationFailed('/body/customName', 'is required for an audience that addresses no person and no account');
  }
  return { computedName: input.customName, personId: null, accountId: null };
}

function clip(name: string): string {
  return name.length <= AUDIENCE_LIMITS.name ? name : `${name.slice(0, AUDIENCE_LIMITS.name - 1)}…`;
}

/**
 * Creates an audience over the API — THE one way to create an audience from tenant input (the
 * route `POST /v0/pages/{page_id}/audiences`, and the batch endpoint and CSV import, which call
 * it per item). Signature (kept stable for those callers):
 *
 *     createAudience(scope, clock, pageId, input) → Promise<Audience>
 *
 * - `scope`: the tenant's scope; joins the caller's transaction when it is in one (so a batch
 *   can run each item in a savepoint), otherwise runs in its own.
 * - `input`: the create body without `idempotencyKey` (AudienceInput): `personId`, or
 *   `accountId`, or neither (then `customName` is required); the optional fields; an optional
 *   `personRouteKey` (else a random 128-bit one). Limits are the body schema's (AUDIENCE_LIMITS);
 *   a caller that did not go through the route's schema validates first.
 * - Refusals (AppError, nothing written): 404 `not_found` for an unknown page; 409
 *   `page_archived`; 422 `validation_failed` at `/body/personId` | `/body/accountId` (not the
 *   tenant's, or both given) | `/body/customName` (missing for a segment); 409 `route_key_taken`
 *   when an audience of the page already has that key.
 * - What it writes: the audience; version 1 made at once by the built-in writer and published (so
 *   `publishedVersion` is a real version from the first moment and the audience's links serve
 *   it); version 2 queued for the configured generator (the model writer when LLM_BASE_URL is
 *   set), which the worker makes and, per the page's rules, publishes or leaves as a draft. The
 *   returned Audience has status `queued` (its latest version) and publishedVersion = version 1.
 */
export async function createAudience(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  input: AudienceInput,
): Promise<Audience> {
  return scope.transaction(async (tx) => {
    const page = await visiblePage(tx, pageId, { lock: true });
    if (page.status === 'archived') throw pageArchived(pageId);
    const audienceId = await createAudienceOnLockedPage(tx, clock, pageId, input);
    // The page row read above is the page as it is (locked): no second read of it for the answer.
    const [audience] = await withVersions(tx, [(await q.findAudience(tx, pageId, audienceId))!], page.metadata);
    return audience!;
  });
}

/**
 * createAudience's checks and writes for a caller that holds the lock of a page it found not
 * archived, inside its transaction (the batch endpoint and the CSV import, per item): the new
 * audience's id, without reading it back.
 */
export async function createAudienceOnLockedPage(
  tx: TenantScope,
  clock: Clock,
  pageId: string,
  input: AudienceInput,
): Promise<string> {
  const who = await addressee(tx, input);
  // The page row is locked: two creates on one page cannot both take a key.
  const personRouteKey = input.personRouteKey ?? randomRouteKey();
  if (await q.routeKeyTaken(tx, pageId, personRouteKey)) {
    throw new AppError('route_key_taken', `An audience of page "${pageId}" already has this personRouteKey.`, [
      { path: '/body/personRouteKey', message: 'is already the key of another audience of this page' },
    ]);
  }
  const metadataOverride = input.metadataOverride === undefined ? null : mergeMetadata(null, input.metadataOverride);
  const { audienceId } = await insertSeededAudience(
    tx,
    clock,
    {
      pageId,
      ...who,
      customName: input.customName ?? null,
      isNewPageAgent: input.isNewPageAgent ?? false,
      personRouteKey,
      actionFormIdOverride: input.actionFormIdOverride ?? null,
      actionFormInstructionsOverride: input.actionFormInstructionsOverride ?? null,
      actionUrlOverride: input.actionUrlOverride ?? null,
      supplementaryContext: input.supplementaryContext ?? null,
      metadataOverride,
    },
    builtinWriter,
  );
  await createVersionIn(tx, clock, { pageId, audienceId, operationKey: null });
  return audienceId;
}
