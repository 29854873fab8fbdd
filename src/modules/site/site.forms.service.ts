import type { Database } from '../../db/connect.js';
import type { DailyCap } from '../../db/daily-caps.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { SessionIngest, type SessionTokens } from '../audience-sessions/index.js';
import { readSubmission, submitForm, type FieldProblem, type FormValues } from '../form-submissions/index.js';
import type { ActionModel } from './site.model.js';
import type { FormPageOutcome, PageService } from './site.pages.service.js';
import type { FormState, RenderedPage } from './site.render.js';
import type { PageSigner } from './site.tokens.js';

type FormAction = ActionModel & { form: NonNullable<ActionModel['form']> };
type FormPage = Extract<FormPageOutcome, { status: 200 }>;

/** A refused form: the error, and (when the page has a form to show) what to show it again with. */
type FormRefusal = { kind: 'refused'; error: AppError; page: FormPage; form: FormState | null };

export type FormOutcome =
  | { kind: 'no-page'; status: 404 | 410 }
  | FormRefusal
  | { kind: 'accepted'; formSubmissionId: string; created: boolean; actionId: string };

export interface FormRules {
  /** A form sent sooner than this after its stamp is refused until the time has passed (0: off). */
  minFillMs: number;
  /** Identical submissions without a token within this window are one. */
  dedupeWindowMs: number;
}

/** How long a form stamp stays good: a tab left open for a day still sends (after one more wait). */
const STAMP_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** A stamp made by a node whose clock runs ahead of this one's by up to this much is still good. */
const STAMP_CLOCK_SKEW_MS = 60_000;

function refusal(code: string, status: number, problems: FieldProblem[], extensions = {}): AppError {
  const detail = problems.map((p) => p.message).join(' ');
  return new AppError(
    code,
    detail,
    problems.filter((p) => p.field !== 'form').map((p) => ({ path: `/body/${p.field}`, message: p.message })),
    status,
    extensions,
  );
}

/**
 * A visitor's form, posted to the page's own address (docs/forms.md): which page and which of its
 * forms it is, whether its fields pass the submission rules, whose visit it belongs to; then the
 * submission itself is form-submissions' `submitForm`. Whatever the visitor can fix is a refusal
 * to show them, never an error.
 */
export class FormService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly pages: PageService,
    private readonly tokens: SessionTokens,
    private readonly signer: PageSigner,
    /** The tenant's daily cap on submissions (FORM_SUBMISSIONS_PER_TENANT_PER_DAY). */
    private readonly dailyCap: DailyCap,
    private readonly rules: FormRules,
  ) {}

  /**
   * A new form stamp for `client` (its address key) on a page of the tenant: what `GET
   * /_ap/form-stamp` answers, and what a form shown again without script carries.
   */
  stamp(tenantId: string, client: string): string {
    return this.signer.formStamp(tenantId, client, this.clock.now().getTime());
  }

  /**
   * The minimum fill time, counted from the stamp the service gave this client (docs/forms.md,
   * Fill time): null when the form may go, else how long to wait and the stamp to send again with
   * (the same one while it is good, so waiting is enough; a new one when it is missing, forged,
   * another client's or too old).
   */
  #tooSoon(tenantId: string, client: string, sent: string | null): { stamp: string; waitMs: number } | null {
    const minFillMs = this.rules.minFillMs;
    if (minFillMs <= 0) return null;
    const now = this.clock.now().getTime();
    const madeAt = sent === null ? null : this.signer.readFormStamp(tenantId, client, sent);
    const ageMs = madeAt === null ? null : now - madeAt;
    if (ageMs === null || ageMs < -STAMP_CLOCK_SKEW_MS || ageMs > STAMP_MAX_AGE_MS) {
      return { stamp: this.stamp(tenantId, client), waitMs: minFillMs };
    }
    return ageMs >= minFillMs ? null : { stamp: sent!, waitMs: minFillMs - Math.max(0, ageMs) };
  }

  /**
   * `origin` (scheme://host[:port]) and `path` make the page's address, recorded with the
   * submission; `client` is the sender's address key (the form stamp is bound to it).
   */
  async accept(post: {
    host: string;
    path: string;
    origin: string;
    client: string;
    body: unknown;
  }): Promise<FormOutcome> {
    const page = await this.pages.formPage(post.host, post.path);
    if (page.status !== 200) return { kind: 'no-page', status: page.status };
    const formActions = page.model.actions.filter((a): a is FormAction => Boolean(a.form));

    const body = post.body;
    const fields =
      body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const requestedAction = typeof fields.ap_action === 'string' ? fields.ap_action : '';
    const shownAction = formActions.find((a) => a.actionId === requestedAction) ?? formActions[0];
    const refuse = (
      error: AppError,
      values: FormValues,
      problems: FieldProblem[],
      sentStamp: string | null,
    ): FormRefusal => ({
      kind: 'refused',
      error,
      page,
      form:
        shownAction === undefined
          ? null
          : {
              actionId: shownAction.actionId,
              values,
              problems: problems.length > 0 ? problems : [{ field: 'form', message: error.detail }],
              // Shown again, the form carries a stamp: once fixed and sent, it need not wait again.
              stamp: this.#tooSoon(page.tenantId, post.client, sentStamp)?.stamp ?? sentStamp,
            },
    });

    const reading = readSubmission(fields);
    if (!reading.ok) {
      return refuse(refusal(reading.code, 422, reading.problems), reading.values, reading.problems, reading.stamp);
    }
    const { input } = reading;
    const action = formActions.find((a) => a.actionId === input.actionId);
    if (action === undefined || input.audienceId !== page.audienceId) {
      const problems: FieldProblem[] = [
        { field: 'form', message: 'This form is no longer on the page. Please reload the page and send it again.' },
      ];
      return refuse(refusal('form_unknown', 422, problems), input.values, problems, input.stamp);
    }
    const tooSoon = this.#tooSoon(page.tenantId, post.client, input.stamp);
    if (tooSoon !== null) {
      const message =
        input.stamp === tooSoon.stamp
          ? 'That was very quick. Please wait a moment, then press the button again.'
          : 'Please check your details, then press the button again to send them.';
      const problems: FieldProblem[] = [{ field: 'form', message }];
      const error = refusal('form_too_fast', 422, problems, { stamp: tooSoon.stamp, retryAfterMs: tooSoon.waitMs });
      return refuse(error, input.values, problems, tooSoon.stamp);
    }

    // Last of the checks, so that only a submission that would be stored takes one of the day's places.
    const room = await this.dailyCap.take(page.tenantId);
    if (!room.ok) {
      const problems: FieldProblem[] = [
        { field: 'form', message: 'This form cannot take more submissions today. Please try again tomorrow.' },
      ];
      const error = refusal('daily_cap_reached', 429, problems, { retryAfterSeconds: room.retryAfterSeconds });
      return refuse(error, input.values, problems, input.stamp);
    }

    // The visitor's session, when the script sent the token of a session of this very page view.
    const ref = input.sessionToken === null ? null : this.tokens.read(page.tenantId, input.sessionToken);
    const session =
      ref !== null && ref.pageId === page.pageId && ref.audienceId === page.audienceId
        ? { sessionId: ref.sessionId }
        : null;

    // Visits are written in batches (SessionIngest): the one this submission marks must be there.
    if (session !== null) await SessionIngest.flushAll();
    const scope = TenantScope.of(this.database, page.tenantId);
    try {
      const result = await submitForm(scope, this.clock, {
        target: {
          pageId: page.pageId,
          audienceId: page.audienceId,
          pageLinkId: page.pageLinkId,
          actionId: action.actionId,
          formId: action.form.formId ?? action.actionId,
          pageUrl: `${post.origin}${post.path}`.slice(0, 2048),
        },
        values: input.values,
        token: input.token,
        session,
        windowMs: this.rules.dedupeWindowMs,
      });
      const { formSubmissionId } = result.submission;
      return { kind: 'accepted', formSubmissionId, created: result.created, actionId: action.actionId };
    } catch (error) {
      // What a person's rules refuse (an identity held elsewhere): the visitor's problem, never a 5xx.
      if (error instanceof AppError && error.status < 500) {
        return refuse(error, input.values, [{ field: 'form', message: error.detail }], input.stamp);
      }
      throw error;
    }
  }

  /** The page again with the refused form's values and problems (for a browser without script). */
  pageAgain(page: FormPage, form: FormState, origin: string): RenderedPage {
    return this.pages.render(page.model, page.tenantId, page.audienceId, origin, form);
  }
}
