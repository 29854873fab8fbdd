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
interface SubmissionTarget {
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
interface SubmissionSession {
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

type SubmissionRow = Omit<q.NewFormSubmission, 'person_id'>;

/** Which submission, and what it belongs to: page, audience, link, form, the visit. */
function references(row: SubmissionRow) {
  return {
    formSubmissionId: row.id,
    pageId: row.page_id,
    audienceId: row.audience_id,
    pageLinkId: row.page_link_id,
    actionId: row.action_id,
    formId: row.form_id,
    analyticsSessionId: row.analytics_session_id,
  };
}

/** What the visitor sent, from which address, and when. */
function contents(row: SubmissionRow) {
  return {
    email: row.email,
    name: row.name,
    phoneNumber: row.phone_number,
    company: row.company,
    message: row.message,
    pageUrl: row.page_url,
    createdAt: row.created_at,
  };
}

/** A stored submission as events show it. */
function toFormSubmission(row: q.NewFormSubmission): FormSubmission {
  return { ...references(row), personId: row.person_id, ...contents(row) };
}

const orNull = (value: string) => (value === '' ? null : value);

/**
 * Thrown inside the transaction when a concurrent repeat took the dedupe key first, so that what
 * this one wrote (the person log) is undone; the repeat's submission is then the answer.
 */
class DedupeKeyTaken extends Error {
  constructor(readonly dedupeKey: string) {
    super('a concurrent repeat of this form submission took its dedupe key');
  }
}

/**
 * Records a form submission, once (docs/forms.md): in one transaction, the person it names, found
 * or created by the person log path of `POST /v0/person_logs` with an entry
 * `page-form`/`form-submitted`; the submission, with that person; the visitor's session marked;
 * `form.submitted` in the outbox and its enrichment queued. Runs its own transaction.
 *
 * A repeat (the same token, or without one an identical submission within the window) returns the
 * first submission with `created: false` and writes nothing: it is looked for first, and the unique
 * dedupe key decides between concurrent repeats (the one that loses undoes its transaction).
 */
export async function submitForm(
  scope: TenantScope,
  clock: Clock,
  input: SubmitInput,
): Promise<{ submission: FormSubmission; created: boolean }> {
  if (scope.inTransaction) throw new Error('submitForm runs its own transaction (a repeat undoes it)');
  try {
    return await scope.transaction((tx) => recordOnce(tx, clock, input));
  } catch (error) {
    if (!(error instanceof DedupeKeyTaken)) throw error;
    const holder = await q.findByDedupeKey(scope, error.dedupeKey);
    if (holder === undefined) throw new Error('form submission dedupe key conflicted but no holder was found');
    return { submission: toFormSubmission(holder), created: false };
  }
}

async function recordOnce(
  tx: TenantScope,
  clock: Clock,
  input: SubmitInput,
): Promise<{ submission: FormSubmission; created: boolean }> {
  const first = await findRepeat(tx, clock, input);
  if (!('dedupeKey' in first)) return { submission: toFormSubmission(first), created: false };

  const draft = newSubmission(clock, input, first);
  const log = await writePersonLog(tx, clock, {
    source: 'page-form',
    type: 'form-submitted',
    // The entry is about the person: the submission as events show it, less its personId; what
    // the visitor typed is marked as such. The email alone finds the person (or names a new one):
    // the phone number stays submitted data, never a person's (docs/forms.md#identity).
    payload: { ...references(draft), ...contents(draft), identityVerified: false },
    email: draft.email,
    name: draft.name ?? undefined,
  });
  const row: q.NewFormSubmission = { ...draft, person_id: log.body.personId };
  if (!(await q.insertSubmissionIfNew(tx, row))) throw new DedupeKeyTaken(row.dedupe_key);
  const submission = toFormSubmission(row);

  if (input.session !== null) {
    await markFormSubmitted(tx, {
      sessionId: input.session.sessionId,
      pageId: submission.pageId,
      audienceId: submission.audienceId,
      formSubmissionId: submission.formSubmissionId,
      formSubmissionIdentifier: submission.formId,
      formSubmissionEmail: submission.email,
      formSubmissionPhone: input.values.phoneNumber,
      now: submission.createdAt,
    });
  }
  await announce(tx, clock, submission, log.body.createdPerson);
  return { submission, created: true };
}

/**
 * The submission this one repeats, if any; else the dedupe key and content hash it is stored with.
 * With a token the key is the token; without one, identical submissions of the last window are
 * one, and within a window the key is the same, so two concurrent identical posts meet at the index.
 */
async function findRepeat(
  tx: TenantScope,
  clock: Clock,
  input: SubmitInput,
): Promise<q.NewFormSubmission | { dedupeKey: string; hash: string }> {
  const { target, values } = input;
  const hash = contentHash(target.pageId, target.audienceId, target.actionId, values);
  if (input.token !== null) {
    const dedupeKey = `t:${input.token}`;
    return (await q.findByDedupeKey(tx, dedupeKey)) ?? { dedupeKey, hash };
  }
  const now = clock.now().getTime();
  const recent = await q.findRecentIdentical(tx, hash, new Date(now - input.windowMs).toISOString());
  return recent ?? { dedupeKey: `c:${hash}:${Math.floor(now / input.windowMs)}`, hash };
}

function newSubmission(clock: Clock, input: SubmitInput, key: { dedupeKey: string; hash: string }): SubmissionRow {
  const { target, values } = input;
  return {
    id: newId('formSubmission'),
    page_id: target.pageId,
    audience_id: target.audienceId,
    page_link_id: target.pageLinkId,
    action_id: target.actionId,
    form_id: target.formId,
    analytics_session_id: input.session?.sessionId ?? null,
    email: values.email,
    name: orNull(values.name),
    phone_number: orNull(values.phoneNumber),
    company: orNull(values.company),
    message: orNull(values.message),
    page_url: target.pageUrl,
    dedupe_key: key.dedupeKey,
    content_hash: key.hash,
    created_at: isoNow(clock),
  };
}

/** What follows a new submission: `form.submitted` in the outbox, and its enrichment queued. */
async function announce(tx: TenantScope, clock: Clock, submission: FormSubmission, personCreated: boolean) {
  const { pageId, audienceId } = submission;
  const [person, names] = await Promise.all([
    getPerson(tx, submission.personId),
    q.findPageAndAudience(tx, pageId, audienceId),
  ]);
  await appendEvent(tx, clock, 'form.submitted', {
    formSubmission: submission,
    page: { pageId, title: names?.page_title ?? null },
    audience: { audienceId, name: names?.custom_name ?? names?.computed_name ?? null },
    person,
    analyticsSessionId: submission.analyticsSessionId,
  });
  await enqueueEnrichment(
    tx,
    {
      formSubmissionId: submission.formSubmissionId,
      personId: submission.personId,
      email: submission.email,
      name: submission.name,
      company: submission.company,
      pageId,
      audienceId,
      personCreated,
    },
    clock,
  );
}
