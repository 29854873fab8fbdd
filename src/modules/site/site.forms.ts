import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import type { Clock } from '../../lib/clock.js';
import type { SessionTokens } from '../audience-sessions/index.js';
import {
  FORM_LIMITS,
  readSubmission,
  submitForm,
  type FieldProblem,
  type FormValues,
} from '../form-submissions/index.js';
import { htmlHeaders } from './site.headers.js';
import type { ActionModel } from './site.model.js';
import type { PageService } from './site.service.js';

/** The largest form body accepted (docs/forms.md, Limits). */
export const FORM_BODY_LIMIT = FORM_LIMITS.bodyBytes;

const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'application/json']);

export interface FormDeps {
  database: Database;
  clock: Clock;
  pages: PageService;
  tokens: SessionTokens;
  perClientPerMinute: number;
  minFillMs: number;
  dedupeWindowSeconds: number;
  /** `scheme://host[:port]` of the request (the page's origin). */
  origin: (request: FastifyRequest) => string;
  /** The small HTML error page of a status. */
  sendError: (reply: FastifyReply, status: number) => FastifyReply;
}

const mediaType = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();

/** The page script (and any API-like client) asks for JSON; a browser without script gets HTML. */
export const wantsJson = (request: FastifyRequest) =>
  mediaType(request) === 'application/json' || (request.headers.accept ?? '').includes('application/json');

/** `host[:port]` of an Origin header, lowercase; null for `null` or anything unparseable. */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

function refusal(code: string, status: number, problems: FieldProblem[]): AppError {
  const detail = problems.map((p) => p.message).join(' ');
  return new AppError(
    code,
    detail,
    problems.filter((p) => p.field !== 'form').map((p) => ({ path: `/body/${p.field}`, message: p.message })),
    status,
  );
}

/**
 * Form submissions to a page's own address (docs/forms.md, Protocol): `POST {page path}` on a
 * tenant host, form-urlencoded (a browser without script: 303 to the thank-you state, or the page
 * again with the errors) or JSON (the page script: 201/200 JSON, or problem+json).
 */
export function formHandler(deps: FormDeps) {
  const { database, clock, pages, tokens } = deps;
  const clients =
    deps.perClientPerMinute > 0 ? new TokenBuckets(deps.perClientPerMinute / 60, deps.perClientPerMinute) : null;

  return async function handle(request: FastifyRequest, reply: FastifyReply, host: string) {
    reply.header('cache-control', 'no-store');
    const json = wantsJson(request);
    const path = request.url.split('?', 1)[0]!;

    // Only the page itself posts its form: browsers say where a request comes from. The Origin's
    // host is compared (not its scheme: behind a TLS proxy this process may see plain http).
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    if (
      (site !== undefined && site !== 'same-origin' && site !== 'none') ||
      (origin !== undefined && originHost(origin) !== (request.headers.host ?? '').toLowerCase())
    ) {
      return sendProblem(
        request,
        reply,
        new AppError('cross_origin_request', 'Forms are accepted from the page’s own origin only.'),
      );
    }
    if (!FORM_TYPES.has(mediaType(request))) {
      return sendProblem(
        request,
        reply,
        new AppError(
          'unsupported_media_type',
          'Send the form as application/x-www-form-urlencoded (a plain HTML form) or application/json.',
        ),
      );
    }

    // Before any database work: a flood costs the service as little as possible.
    if (clients !== null) {
      const taken = clients.take(request.ip);
      if (!taken.ok) {
        reply.header('retry-after', String(taken.retryAfterSeconds));
        if (!json) return deps.sendError(reply, 429);
        const message = `Too many forms sent from your address; please try again in ${taken.retryAfterSeconds} s.`;
        return sendProblem(request, reply, new AppError('rate_limited', message));
      }
    }

    const page = await pages.formPage(host, path);
    if (page.status !== 200) {
      if (!json) return deps.sendError(reply, page.status);
      return sendProblem(
        request,
        reply,
        page.status === 410
          ? new AppError('page_gone', 'This page has been taken down; the form can no longer be sent.', [], 410)
          : new AppError('not_found', 'There is no page with a form at this address.'),
      );
    }
    const formActions = page.model.actions.filter((a): a is ActionModel & { form: NonNullable<ActionModel['form']> } =>
      Boolean(a.form),
    );

    const body = request.body;
    const fields =
      body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const requestedAction = typeof fields.ap_action === 'string' ? fields.ap_action : '';
    const shownAction = formActions.find((a) => a.actionId === requestedAction) ?? formActions[0];

    /** A refusal: problem+json for the script, the page again with the errors (and values) without it. */
    const refuse = (error: AppError, values: FormValues, problems: FieldProblem[]) => {
      if (json || shownAction === undefined) return sendProblem(request, reply, error);
      const { html, csp } = pages.render(page.model, page.tenantId, page.audienceId, deps.origin(request), {
        actionId: shownAction.actionId,
        values,
        problems: problems.length > 0 ? problems : [{ field: 'form', message: error.detail }],
      });
      return htmlHeaders(reply.code(error.status), csp).send(html);
    };

    const reading = readSubmission(fields, deps.minFillMs);
    if (!reading.ok) {
      return refuse(refusal(reading.code, 422, reading.problems), reading.values, reading.problems);
    }
    const { input } = reading;
    const action = formActions.find((a) => a.actionId === input.actionId);
    if (action === undefined || input.audienceId !== page.audienceId) {
      const message = 'This form is no longer on the page. Please reload the page and send it again.';
      return refuse(refusal('form_unknown', 422, [{ field: 'form', message }]), input.values, [
        { field: 'form', message },
      ]);
    }

    // The visitor's session, when the script sent the token of a session of this very page view.
    const ref = input.sessionToken === null ? null : tokens.read(page.tenantId, input.sessionToken);
    const session =
      ref !== null && ref.pageId === page.pageId && ref.audienceId === page.audienceId
        ? { sessionId: ref.sessionId }
        : null;

    const scope = TenantScope.of(database, page.tenantId);
    let result: Awaited<ReturnType<typeof submitForm>>;
    try {
      result = await submitForm(scope, clock, {
        target: {
          pageId: page.pageId,
          audienceId: page.audienceId,
          pageLinkId: page.pageLinkId,
          actionId: action.actionId,
          formId: action.form.formId ?? action.actionId,
          pageUrl: `${deps.origin(request)}${path}`.slice(0, 2048),
        },
        values: input.values,
        token: input.token,
        session,
        windowMs: deps.dedupeWindowSeconds * 1000,
      });
    } catch (error) {
      // What a person's rules refuse (an identity held elsewhere): the visitor's problem, never a 5xx.
      if (error instanceof AppError && error.status < 500) {
        return refuse(error, input.values, [{ field: 'form', message: error.detail }]);
      }
      throw error;
    }
    if (json) {
      return reply.code(result.created ? 201 : 200).send({
        formSubmissionId: result.submission.formSubmissionId,
        status: 'sent',
        replayed: !result.created,
      });
    }
    // Post/redirect/get to the thank-you state: a fragment, so the page's cached bytes show it (CSS :target).
    const safePath = path.startsWith('/') && !path.startsWith('//') && !path.includes('\\') ? path : '/';
    return reply
      .code(303)
      .header('location', `${safePath}#ap-sent-${encodeURIComponent(action.actionId)}`)
      .send();
  };
}
