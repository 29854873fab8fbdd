import type { Insertable, Updateable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { AudiencesTable, AudienceVersionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { transition, type VersionEvent } from './audiences.version-lifecycle.js';

const AUDIENCE_COLUMNS = [
  'audiences.id',
  'audiences.page_id',
  'audiences.computed_name',
  'audiences.custom_name',
  'audiences.is_new_page_agent',
  'audiences.person_id',
  'audiences.person_route_key',
  'audiences.account_id',
  'audiences.action_form_id_override',
  'audiences.action_form_instructions_override',
  'audiences.action_url_override',
  'audiences.supplementary_context',
  'audiences.metadata_override',
  'audiences.created_at',
  'audiences.archived_at',
] as const;

/** What the API shows of a version (the artifact and job columns stay inside). */
const VERSION_COLUMNS = [
  'audience_versions.id',
  'audience_versions.audience_id',
  'audience_versions.version_number',
  'audience_versions.status',
  'audience_versions.is_new_page_agent',
  'audience_versions.supplementary_context',
  'audience_versions.queue_duration_ms',
  'audience_versions.created_at',
  'audience_versions.queued_at',
  'audience_versions.became_draft_at',
  'audience_versions.published_at',
  'audience_versions.cancelled_at',
  'audience_versions.obsolete_at',
  'audience_versions.archived_at',
] as const;

export type AudienceRow = Awaited<ReturnType<typeof findAudience>> & {};
export type VersionRow = Awaited<ReturnType<typeof findVersion>> & {};

const NEWEST_FIRST = [{ ref: 'audiences.id', direction: 'desc' as const }];

export async function findAudience(
  scope: TenantScope,
  pageId: string,
  audienceId: string,
  options: { lock?: boolean } = {},
) {
  const query = scope
    .selectFrom('audiences')
    .select(AUDIENCE_COLUMNS)
    .where('audiences.id', '=', audienceId)
    .where('audiences.page_id', '=', pageId);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

export async function findAudienceById(scope: TenantScope, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .select(AUDIENCE_COLUMNS)
    .where('audiences.id', '=', audienceId)
    .executeTakeFirst();
}

export async function listAudiences(scope: TenantScope, pageId: string, window: KeysetWindow) {
  let query = scope.selectFrom('audiences').select(AUDIENCE_COLUMNS).where('audiences.page_id', '=', pageId);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('audiences.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countAudiences(scope: TenantScope, pageId: string): Promise<number> {
  const row = await scope
    .selectFrom('audiences')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('audiences.page_id', '=', pageId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertAudience(scope: TenantScope, row: Omit<Insertable<AudiencesTable>, 'tenant_id'>) {
  await scope.insertInto('audiences', row).execute();
}

export async function updateAudience(scope: TenantScope, audienceId: string, changes: Updateable<AudiencesTable>) {
  await scope.updateTable('audiences').set(changes).where('audiences.id', '=', audienceId).execute();
}

/** Whether an audience of the page already answers to `routeKey` (archived ones included). */
export async function routeKeyTaken(scope: TenantScope, pageId: string, routeKey: string): Promise<boolean> {
  const row = await scope
    .selectFrom('audiences')
    .select('audiences.id')
    .where('audiences.person_route_key', '=', routeKey)
    .where('audiences.page_id', '=', pageId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The audience of the page that addresses this person (or this account), for the batch and the
 * import: a live one before an archived one, the oldest first (audiences_page_person / _account).
 */
export async function findAudienceAddressing(
  scope: TenantScope,
  pageId: string,
  who: { personId: string } | { accountId: string },
): Promise<{ id: string } | undefined> {
  const query = scope
    .selectFrom('audiences')
    .select('audiences.id')
    .where('audiences.page_id', '=', pageId)
    .orderBy((eb) => eb.case().when('audiences.archived_at', 'is', null).then(0).else(1).end())
    .orderBy('audiences.id')
    .limit(1);
  return 'personId' in who
    ? query.where('audiences.person_id', '=', who.personId).executeTakeFirst()
    : query
        .where('audiences.account_id', '=', who.accountId)
        .where('audiences.person_id', 'is', null)
        .executeTakeFirst();
}

export async function setAudienceArchivedAt(scope: TenantScope, audienceId: string, archivedAt: string | null) {
  await scope
    .updateTable('audiences')
    .set({ archived_at: archivedAt })
    .where('audiences.id', '=', audienceId)
    .execute();
}

export async function findVersion(scope: TenantScope, versionId: string) {
  return scope
    .selectFrom('audience_versions')
    .select(VERSION_COLUMNS)
    .where('audience_versions.id', '=', versionId)
    .executeTakeFirst();
}

/** The latest and the published version of each audience (one row when they are the same). */
export async function currentVersions(scope: TenantScope, audienceIds: string[]) {
  if (audienceIds.length === 0) return [];
  return scope
    .selectFrom('audience_versions')
    .select(VERSION_COLUMNS)
    .where('audience_versions.audience_id', 'in', audienceIds)
    .where((eb) =>
      eb.or([
        eb('audience_versions.status', '=', 'published'),
        eb(
          'audience_versions.version_number',
          '=',
          eb
            .selectFrom('audience_versions as later')
            .select((s) => s.fn.max('later.version_number').as('n'))
            .whereRef('later.audience_id', '=', 'audience_versions.audience_id'),
        ),
      ]),
    )
    .execute();
}

export async function findVersionByOperationKey(scope: TenantScope, audienceId: string, operationKey: string) {
  return scope
    .selectFrom('audience_versions')
    .select(VERSION_COLUMNS)
    .where('audience_versions.audience_id', '=', audienceId)
    .where('audience_versions.operation_key', '=', operationKey)
    .executeTakeFirst();
}

export async function lastVersionNumber(scope: TenantScope, audienceId: string): Promise<number> {
  const row = await scope
    .selectFrom('audience_versions')
    .select((eb) => eb.fn.max('audience_versions.version_number').as('n'))
    .where('audience_versions.audience_id', '=', audienceId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Versions of the audience in the given statuses (the few that are not at rest). With `lock`, the
 * rows are locked (PostgreSQL): a row a worker is claiming right now is waited for and then read
 * as the worker left it, so a status-guarded transition that follows cannot miss it.
 */
export async function versionsInStatus(
  scope: TenantScope,
  audienceId: string,
  statuses: readonly string[],
  options: { lock?: boolean } = {},
) {
  const query = scope
    .selectFrom('audience_versions')
    .select(['audience_versions.id', 'audience_versions.status'])
    .where('audience_versions.audience_id', '=', audienceId)
    .where('audience_versions.status', 'in', statuses);
  return (options.lock ? forUpdate(scope.engine, query) : query).execute();
}

export async function insertVersion(scope: TenantScope, row: Omit<Insertable<AudienceVersionsTable>, 'tenant_id'>) {
  await scope.insertInto('audience_versions', row).execute();
}

/**
 * Applies a lifecycle transition (version-lifecycle.ts) to one version, guarded by the status it
 * starts from (and the lease token, for the worker): returns false when the version had moved on.
 */
export async function applyTransition(
  scope: TenantScope,
  version: { id: string; status: string },
  event: VersionEvent,
  now: string,
  extra: Updateable<AudienceVersionsTable> = {},
  guard: { leaseToken?: string } = {},
): Promise<boolean> {
  let query = scope
    .updateTable('audience_versions')
    .set({ ...transition(event, version.status, now), ...extra })
    .where('audience_versions.id', '=', version.id)
    .where('audience_versions.status', '=', version.status);
  if (guard.leaseToken !== undefined) query = query.where('audience_versions.lease_token', '=', guard.leaseToken);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What generating a version reads of it (besides its audience and page). */
export async function findVersionToGenerate(scope: TenantScope, versionId: string) {
  return scope
    .selectFrom('audience_versions')
    .select([
      'audience_versions.audience_id',
      'audience_versions.version_number',
      'audience_versions.is_new_page_agent',
      'audience_versions.supplementary_context',
    ])
    .where('audience_versions.id', '=', versionId)
    .executeTakeFirst();
}

/** How a version was made and what it cost (0025), beside its API shape. */
export async function findVersionGeneration(scope: TenantScope, versionId: string) {
  return scope
    .selectFrom('audience_versions')
    .select([
      ...VERSION_COLUMNS,
      'audience_versions.generator',
      'audience_versions.model',
      'audience_versions.input_tokens',
      'audience_versions.output_tokens',
      'audience_versions.generation_ms',
      'audience_versions.attempts',
      'audience_versions.failure_reason',
      'audience_versions.artifact',
    ])
    .where('audience_versions.id', '=', versionId)
    .executeTakeFirst();
}

/** The page's audiences that are not archived, oldest first, a window at a time (keyset on id). */
export async function liveAudienceIds(
  scope: TenantScope,
  pageId: string,
  options: { limit: number; after: string | null },
) {
  let query = scope
    .selectFrom('audiences')
    .select('audiences.id')
    .where('audiences.page_id', '=', pageId)
    .where('audiences.archived_at', 'is', null);
  if (options.after !== null) query = query.where('audiences.id', '>', options.after);
  return (await query.orderBy('audiences.id').limit(options.limit).execute()).map((row) => row.id);
}

/** The versions of the page's audiences that an operation key made (a repeated regenerate request). */
export async function versionIdsByPageOperationKey(scope: TenantScope, pageId: string, operationKey: string) {
  const rows = await scope
    .selectFrom('audience_versions')
    .innerJoin('audiences', (join) =>
      join
        .onRef('audiences.id', '=', 'audience_versions.audience_id')
        .onRef('audiences.tenant_id', '=', 'audience_versions.tenant_id'),
    )
    .select('audience_versions.id')
    .where('audiences.page_id', '=', pageId)
    .where('audience_versions.operation_key', '=', operationKey)
    .orderBy('audience_versions.audience_id')
    .execute();
  return rows.map((row) => row.id);
}

const VERSIONS_NEWEST_FIRST = [{ ref: 'audience_versions.version_number', direction: 'desc' as const }];

/** The audience's versions, newest (highest number) first, a keyset window at a time. */
export async function listVersions(scope: TenantScope, audienceId: string, window: KeysetWindow) {
  let query = scope
    .selectFrom('audience_versions')
    .select(VERSION_COLUMNS)
    .where('audience_versions.audience_id', '=', audienceId);
  if (window.after) query = query.where(keysetAfter(VERSIONS_NEWEST_FIRST, window.after));
  return query
    .orderBy('audience_versions.version_number', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countVersions(scope: TenantScope, audienceId: string): Promise<number> {
  const row = await scope
    .selectFrom('audience_versions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('audience_versions.audience_id', '=', audienceId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A version with its stored artifact (publish, rollback, preview). */
export async function findVersionWithArtifact(scope: TenantScope, versionId: string) {
  return scope
    .selectFrom('audience_versions')
    .select([
      ...VERSION_COLUMNS,
      'audience_versions.artifact',
      'audience_versions.generator',
      'audience_versions.model',
      'audience_versions.input_tokens',
      'audience_versions.output_tokens',
      'audience_versions.generation_ms',
    ])
    .where('audience_versions.id', '=', versionId)
    .executeTakeFirst();
}

export async function updateVersion(
  scope: TenantScope,
  versionId: string,
  changes: Updateable<AudienceVersionsTable>,
): Promise<void> {
  await scope.updateTable('audience_versions').set(changes).where('audience_versions.id', '=', versionId).execute();
}
