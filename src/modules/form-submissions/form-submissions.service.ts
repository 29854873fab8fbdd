import type { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { appendEvent } from '../../outbox/events.js';
import { markFormSubmitted } from '../audience-sessions/index.js';
import { enqueueEnrichment } from '../enrichment/index.js';
import { writePersonLog } from '../person-logs/index.js';
import { getPerson } from '../persons/index.js';
import * as q from './form-submissions.queries.js';
import { contentHash, type FormValues } from './form-submissions.rules.js';

/** Where a submission was made: resolved by the page runtime from the page's URL and version. */
export interface SubmissionTarget {
  pageId: string;
  audienceId: string;
  pageLinkId: string;
  actionId: string;
  /** The action's form id (the audience's `actionFormIdOverride`), else the action id. */
  formId: string;
  /** Origin and path of the page. */
  pageUrl: string;
}

/** The visitor's session, as its token named it (already checked for this tenant, page and audience). */
export interface SubmissionSession {
  sessionId: string;
}

export interface SubmitInput {
  target: SubmissionTarget;
  values: FormValues;
  token: string | null;
  session: SubmissionSession | null;
  /** Identical submissions without a token within this window are one (docs/forms.md). */
  windowMs: number;
}

/** A submission as events and logs show it. */
export interface FormSubmission {
  formSubmissionId: string;
  pageId: string;
  audienceId: string;
  pageLinkId: string;
  actionId: string;
  formId: string;
  analyticsSessionId: string | null;
  personId: string;
  email: string;
  name: string | null;
  phoneNumber: string | null;
  company: string | null;
  message: string | null;
  pageUrl: string;
  createdAt: string;
}

export function toFormSubmission(row: q.FormSubmissionRow): FormSubmission {
  return {
    formSubmissionId: row.id,
    pageId: row.page_id,
    audienceId: row.audience_id,
    pageLinkId: row.page_link_id,
    actionId: row.action_id,
    formId: row.form_id,
    analyticsSessionId: row.analytics_session_id,
    personId: row.person_id,
    email: row.email,
    name: row.name,
    phoneNumber: row.phone_number,
    company: row.company,
    message: row.message,
    pageUrl: row.page_url,
    createdAt: row.created_at,
  };
}

const orNull = (value: string) => (value === '' ? null : value);

/**
 * Records a form submission, once (docs/forms.md): in one transaction, the submission; the person
 * it names, found or created by the person log path of `POST /v0/person_logs` with an entry
 * `page-form`/`form-submitted`; the visitor's session marked; `form.submitted` in the outbox.
 *
 * A repeat (the same token, or without one an identical submission within the window) returns the
 * first submission with `created: false` and writes nothing: the unique dedupe key decides, so
 * concurrent repeats cannot both get through.
 */
export async function submitForm(
  scope: TenantScope,
  clock: Clock,
  input: SubmitInput,
): Promise<{ submission: FormSubmission; created: boolean }> {
  const { target, values } = input;
  return scope.transaction(async (tx) => {
    const now = clock.now();
    const hash = contentHash(target.pageId, target.audienceId, target.actionId, values);
    let dedupeKey: string;
    if (input.token !== null) {
      dedupeKey = `t:${input.token}`;
    } else {
      const since = new Date(now.getTime() - input.windowMs).toISOString();
      const recent = await q.findRecentIdentical(tx, hash, since);
      if (recent !== undefined) return { submission: toFormSubmission(recent), created: false };
      // Within a window the key is the same, so two concurrent identical posts meet at the index.
      dedupeKey = `c:${hash}:${Math.floor(now.getTime() / input.windowMs)}`;
    }

    const id = newId('formSubmission');
    const row: q.FormSubmissionRow = {
      id,
      tenant_id: tx.tenantId,
      page_id: target.pageId,
      audience_id: target.audienceId,
      page_link_id: target.pageLinkId,
      action_id: target.actionId,
      form_id: target.formId,
      analytics_session_id: input.session?.sessionId ?? null,
      person_id: '',
      email: values.email,
      name: orNull(values.name),
      phone_number: orNull(values.phoneNumber),
      company: orNull(values.company),
      message: orNull(values.message),
      page_url: target.pageUrl,
      dedupe_key: dedupeKey,
      content_hash: hash,
      created_at: isoNow(clock),
    };
    const { tenant_id: _tenant, ...insertable } = row;
    if (!(await q.insertSubmissionIfNew(tx, insertable))) {
      const holder = await q.findByDedupeKey(tx, dedupeKey);
      if (holder !== undefined) return { submission: toFormSubmission(holder), created: false };
      throw new Error('form submission dedupe key conflicted but no holder was found');
    }

    const { personId: _unknownYet, ...payload } = toFormSubmission(row);
    const log = await writePersonLog(tx, clock, {
      source: 'page-form',
      type: 'form-submitted',
      payload,
      email: values.email,
      phoneNumber: row.phone_number ?? undefined,
      name: row.name ?? undefined,
    });
    const personId = log.body.personId;
    await tx
      .updateTable('form_submissions')
      .set({ person_id: personId })
      .where('form_submissions.id', '=', id)
      .execute();
    const submission = toFormSubmission({ ...row, person_id: personId });

    if (input.session !== null) {
      await markFormSubmitted(tx, {
        sessionId: input.session.sessionId,
        pageId: target.pageId,
        audienceId: target.audienceId,
        formSubmissionId: id,
        formSubmissionIdentifier: target.formId,
        formSubmissionEmail: values.email,
        formSubmissionPhone: values.phoneNumber,
        now: submission.createdAt,
      });
    }

    const [person, names] = await Promise.all([
      getPerson(tx, personId),
      q.findPageAndAudience(tx, target.pageId, target.audienceId),
    ]);
    await appendEvent(tx, clock, 'form.submitted', {
      formSubmission: submission,
      page: { pageId: target.pageId, title: names?.page_title ?? null },
      audience: {
        audienceId: target.audienceId,
        name: names?.custom_name ?? names?.computed_name ?? null,
      },
      person,
      analyticsSessionId: submission.analyticsSessionId,
    });

    await enqueueEnrichment(
      tx,
      {
        formSubmissionId: id,
        personId,
        email: values.email,
        name: submission.name,
        company: submission.company,
        pageId: target.pageId,
        audienceId: target.audienceId,
      },
      clock,
    );

    return { submission, created: true };
  });
}
