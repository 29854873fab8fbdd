import type { Metadata } from '../pages/index.js';
import type * as q from './audiences.queries.js';
import type { Audience, AudienceVersion } from './audiences.schemas.js';
import type { VersionStatus } from './audiences.version-lifecycle.js';

/** Rows → the API's shapes, shared by the audience and version services and the events. */

export function toVersion(row: q.VersionRow): AudienceVersion {
  return {
    versionId: row.id,
    audienceId: row.audience_id,
    versionNumber: Number(row.version_number),
    status: row.status as VersionStatus,
    isNewPageAgent: row.is_new_page_agent,
    supplementaryContext: row.supplementary_context,
    queueDurationMs: row.queue_duration_ms === null ? null : Number(row.queue_duration_ms),
    createdAt: row.created_at,
    archivedAt: row.archived_at,
    becameDraftAt: row.became_draft_at,
    cancelledAt: row.cancelled_at,
    obsoleteAt: row.obsolete_at,
    publishedAt: row.published_at,
    queuedAt: row.queued_at,
  };
}

/** The page metadata with the audience's override applied key by key (the override wins). */
export function effectiveMetadata(pageMetadata: Record<string, unknown>, override: Record<string, unknown> | null) {
  return { ...pageMetadata, ...(override ?? {}) };
}

export function toAudience(
  row: q.AudienceRow,
  pageMetadata: Record<string, unknown>,
  latest: AudienceVersion,
  published: AudienceVersion,
): Audience {
  return {
    audienceId: row.id,
    pageId: row.page_id,
    status: row.archived_at !== null ? 'archived' : latest.status,
    computedName: row.computed_name,
    customName: row.custom_name,
    effectiveName: row.custom_name ?? row.computed_name,
    isNewPageAgent: row.is_new_page_agent,
    personId: row.person_id,
    personRouteKey: row.person_route_key,
    accountId: row.account_id,
    actionFormIdOverride: row.action_form_id_override,
    actionFormInstructionsOverride: row.action_form_instructions_override,
    actionUrlOverride: row.action_url_override,
    supplementaryContext: row.supplementary_context,
    createdAt: row.created_at,
    archivedAt: row.archived_at,
    latestVersion: latest,
    publishedVersion: published,
    effectiveMetadata: effectiveMetadata(pageMetadata, row.metadata_override) as Metadata,
    metadataOverride: (row.metadata_override ?? {}) as Metadata,
  };
}
