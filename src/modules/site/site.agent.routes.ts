import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import { AGENT_PAGE_CSP, renderAgentPage } from './site.agent-page.js';
import { AgentService, type PostedQuestion } from './site.agent.service.js';
import { htmlErrors, sendErrorPage } from './site.error-pages.js';
import { htmlHeaders } from './site.headers.js';
import { ON_PAGE_HOSTS, type VisitorSide } from './site.page-host.js';
import { AGENT_PATH } from './site.render.js';
import { clientKey } from '../../http/client-address.js';

/** A question is small: the view and session tokens and up to a few thousand characters. */
const ASK_BODY_LIMIT = 16 * 1024;

const mediaType = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();

/** Only the page itself asks: a browser says where a request comes from. */
function fromOtherSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

/** Where "Back to the page" goes: the Referer's path when it is this host's, else nowhere. */
function backPath(request: FastifyRequest): string | null {
  try {
    const referer = new URL(request.headers.referer ?? '');
    if (referer.host.toLowerCase() !== (request.headers.host ?? '').toLowerCase()) return null;
    return referer.pathname.startsWith('/') && !referer.pathname.startsWith('//') ? referer.pathname : null;
  } catch {
    return null;
  }
}

/** The answer in pieces, as the page script reads them: one JSON object per line. */
function* answerLines(text: string, sources: unknown, answered: boolean, action: unknown): Generator<string> {
  for (const piece of text.match(/[^\s]+\s*/gu) ?? []) yield `${JSON.stringify({ t: 'text', v: piece })}\n`;
  yield `${JSON.stringify({ t: 'done', sources, answered, action })}\n`;
}

/**
 * `POST /_ap/ask` on a page host (docs/agent.md, Protocol): a question to the page's agent. JSON
 * from the page script (the answer streamed as NDJSON lines), or a plain form post without script
 * (an answer page). Neither is ever cached. Refusals: problem+json for the script, a small HTML
 * page otherwise; nothing is written for a refused question.
 */
export const agentRoutes: FastifyPluginAsync<VisitorSide> = async (app, { tenantOf, signer, tokens }) => {
  const { database, clock, config } = app.ctx;
  const agent = new AgentService(database, clock, signer, tokens, {
    questionMaxChars: config.agentQuestionMaxChars,
    questionsPerSession: config.agentQuestionsPerSession,
    answerMaxChars: config.agentAnswerMaxChars,
  });
  const perMinute = config.agentQuestionsPerMinute;
  const clients = perMinute > 0 ? new TokenBuckets(perMinute / 60, perMinute) : null;
  const perPage = config.agentQuestionsPerPagePerSecond;
  const pages = perPage > 0 ? new TokenBuckets(perPage, perPage * 5) : null;

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const refuse = (request: FastifyRequest, reply: FastifyReply, json: boolean, error: AppError, question = '') => {
    if (json) return sendProblem(request, reply, error);
    const html = renderAgentPage({
      question,
      answer: error.detail,
      sources: [],
      action: null,
      back: backPath(request),
    });
    return htmlHeaders(reply.code(error.status), AGENT_PAGE_CSP).send(html);
  };

  const limited = (limits: TokenBuckets | null, key: string, reply: FastifyReply, what: string) => {
    const taken = limits?.take(key);
    if (taken === undefined || taken.ok) return null;
    reply.header('retry-after', String(taken.retryAfterSeconds));
    return new AppError(
      'rate_limited',
      `Too many questions ${what}; please try again in ${taken.retryAfterSeconds} s.`,
    );
  };

  app.route({
    method: 'POST',
    url: AGENT_PATH,
    constraints: ON_PAGE_HOSTS,
    bodyLimit: ASK_BODY_LIMIT,
    schema: { hide: true },
    compress: false,
    errorHandler: htmlErrors,
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const json = mediaType(request) === 'application/json';
      const tenantId = tenantOf(request);
      if (tenantId === undefined) return sendErrorPage(reply, 404);
      if (fromOtherSite(request)) {
        const error = new AppError('cross_origin_request', 'Questions are accepted from the page’s own origin only.');
        return refuse(request, reply, json, error);
      }
      const body = (request.body ?? {}) as Partial<PostedQuestion>;
      const posted = { v: body.v, q: body.q, s: body.s };
      const question = typeof posted.q === 'string' ? posted.q.slice(0, 2000) : '';
      const tooMany = limited(clients, clientKey(request.ip), reply, 'from your address');
      if (tooMany !== null) return refuse(request, reply, json, tooMany, question);
      const audienceId = agent.audienceOf(tenantId, posted.v);
      if (audienceId === null)
        return json
          ? sendProblem(request, reply, new AppError('not_found', 'No such page.'))
          : sendErrorPage(reply, 404);
      const busy = limited(pages, audienceId, reply, 'for this page');
      if (busy !== null) return refuse(request, reply, json, busy, question);

      let outcome;
      try {
        outcome = await agent.ask(tenantId, audienceId, posted);
      } catch (error) {
        if (error instanceof AppError && error.status < 500) return refuse(request, reply, json, error, question);
        throw error;
      }
      if (outcome.kind === 'no-page') {
        return json
          ? sendProblem(request, reply, new AppError('not_found', 'This page has no agent.'))
          : sendErrorPage(reply, 404);
      }
      const { answer, page } = outcome;
      if (json) {
        const lines = answerLines(answer.text, answer.sources, answer.answered, answer.answered ? null : page.action);
        return reply
          .code(200)
          .header('content-type', 'application/x-ndjson; charset=utf-8')
          .header('x-content-type-options', 'nosniff')
          .send(Readable.from(lines));
      }
      const html = renderAgentPage({
        question: outcome.question,
        answer: answer.text,
        sources: answer.sources,
        action: page.action,
        back: backPath(request),
      });
      return htmlHeaders(reply.code(200), AGENT_PAGE_CSP).send(html);
    },
  });
};
