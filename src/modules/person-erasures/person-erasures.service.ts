import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { getPerson } from '../persons/index.js';
import { servingChanged } from '../serving/index.js';
import * as q from './person-erasures.queries.js';
import type { PersonErasure, PersonExport } from './person-erasures.schemas.js';

/**
 * Erasing a person and exporting what is stored about them (docs/privacy.md).
 *
 * Erasure removes, in one transaction: the person, their log entries, form submissions and
 * enrichment jobs, the outbox events that carry them, the agent's conversations of their visits;
 * it scrubs the identities copied onto sessions (which stay as anonymous analytics) and the route
 * key in the URLs of visits to their own pages; their own pages (audiences addressed to them) are
 * archived, forget whom they addressed, and lose their generated content. An audit row holding no
 * personal data records it. Erasing again answers as the first time did (idempotent).
 */
export async function erasePerson(scope: TenantScope, clock: Clock, personId: string): Promise<PersonErasure> {
  return scope.transaction(async (tx) => {
    const person = await q.lockPerson(tx, personId);
    if (person === undefined) {
      const done = await q.findErasure(tx, personId);
      if (done === undefined) throw notFound('person', personId);
      return { personId, erasedAt: done.erased_at, alreadyErased: true, counts: done.counts };
    }
    const erasedAt = isoNow(clock);
    const refs = await q.personReferences(tx, personId);
    const counts = await q.eraseRows(tx, personId, refs, erasedAt);
    await q.insertErasure(tx, { id: newId('personErasure'), personId, erasedAt, counts });
    if (refs.audiences.length > 0) await servingChanged(tx);
    return { personId, erasedAt, alreadyErased: false, counts };
  });
}

/** Everything stored about the person (a data access request), as JSON. */
export async function exportPerson(scope: TenantScope, clock: Clock, personId: string): Promise<PersonExport> {
  const person = await getPerson(scope, personId);
  const refs = await q.personReferences(scope, personId);
  const rows = await q.exportRows(scope, personId, refs);
  return {
    exportedAt: isoNow(clock),
    person,
    personLogs: rows.logs.map((r) => ({
      personLogId: r.id,
      source: r.source,
      type: r.type,
      payload: r.payload,
      createdAt: r.created_at,
    })),
    formSubmissions: rows.submissions.map((r) => ({
      formSubmissionId: r.id,
      pageId: r.page_id,
      audienceId: r.audience_id,
      pageLinkId: r.page_link_id,
      actionId: r.action_id,
      formId: r.form_id,
      analyticsSessionId: r.analytics_session_id,
      email: r.email,
      name: r.name,
      phoneNumber: r.phone_number,
      company: r.company,
      message: r.message,
      pageUrl: r.page_url,
      createdAt: r.created_at,
    })),
    enrichmentJobs: rows.enrichmentJobs.map((r) => ({
      formSubmissionId: r.form_submission_id,
      email: r.email,
      name: r.name,
      company: r.company,
      status: r.status,
      provider: r.provider,
      failureReason: r.failure_reason,
      createdAt: r.created_at,
      completedAt: r.completed_at,
    })),
    audiences: rows.audiences.map((r) => ({
      audienceId: r.id,
      pageId: r.page_id,
      personRouteKey: r.person_route_key,
      name: r.custom_name ?? r.computed_name,
      createdAt: r.created_at,
      archivedAt: r.archived_at,
    })),
    audienceSessions: rows.sessions.map((r) => ({
      audienceSessionId: r.id,
      analyticsSessionId: r.analytics_session_id,
      pageId: r.page_id,
      audienceId: r.audience_id,
      pageTitle: r.page_title,
      pageUrl: r.page_url,
      formSubmissionId: r.form_submission_id,
      formSubmissionIdentifier: r.form_submission_identifier,
      formSubmissionEmail: r.form_submission_email,
      formSubmissionPhone: r.form_submission_phone,
      sessionStartedAt: r.session_started_at,
      sessionEndedAt: r.session_ended_at,
      timeSpentSeconds: r.time_spent_seconds,
      utmSource: r.utm_source,
      utmMedium: r.utm_medium,
      utmCampaign: r.utm_campaign,
      utmTerm: r.utm_term,
      utmContent: r.utm_content,
    })),
    agentMessages: rows.messages.map((r) => ({
      messageId: r.id,
      audienceSessionId: r.session_id,
      pageId: r.page_id,
      position: r.position,
      role: r.role,
      content: r.content,
      createdAt: r.created_at,
    })),
  };
}
