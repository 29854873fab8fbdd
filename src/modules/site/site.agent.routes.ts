import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import { sharedLlmClient } from '../../llm/client.js';
import { TokenBudget } from '../../llm/token-budget.js';
import type { Answer, AnswerStream, AskedPage } from '../agent/index.js';
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

/**
 * The answer in pieces as they are written, as the page script reads them: one JSON object per
 * line; the last carries the whole answer's text (what was stored: it replaces what streamed when
 * a model's answer was given up half-way), its sources and, when nothing answered, the action.
 */
async function* answerLines(
  first: IteratorResult<string, Answer>,
  rest: AnswerStream,
  page: AskedPage,
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  let step = first;
  try {
    while (!step.done) {
      yield `${JSON.stringify({ t: 'text', v: step.value })}\n`;
      step = await rest.next();
    }
  } finally {
    // the reader left: the answer ends (and is stored) now
    if (!step.done) await rest.return(undefined as never);
  }
  const answer = step.value as Answer | undefined;
  if (answer === undefined) return; // ended early: the visitor left
  noteFallback(log, answer);
  yield `${JSON.stringify({
    t: 'done',
    text: answer.text,
    sources: answer.sources,
    answered: answer.answered,
    action: answer.answered ? null : page.action,
  })}\n`;
}

/** An answer the model was asked for but did not give: the reason, in the log (docs/agent.md). */
function noteFallback(log: FastifyBaseLogger, answer: Answer & { fallback?: string }) {
  if (answer.fallback !== undefined)
    log.warn({ reason: answer.fallback }, 'agent: extractive answer instead of the model');
}

/**
 * `POST /_ap/ask` on a page host (docs/agent.md, Protocol): a question to the page's agent. JSON
 * from the page script (the answer streamed as NDJSON lines), or a plain form post without script
 * (an answer page). Neither is ever cached. Refusals: problem+json for the script, a small HTML
 * page otherwise; nothing is written for a refused question.
 */
export const agentRoutes: FastifyPluginAsync<VisitorSide> = async (app, { tenantOf, signer, tokens }) => {
  const { database, clock, config } = app.ctx;
  // With LLM_BASE_URL, answers come from the model (generation's client and budget), else extractive.
  const client = sharedLlmClient(config);
  const model =
    client === null
      ? null
      : { client, model: config.llmAgentModel, budget: new TokenBudget(config.llmDailyTokenBudget, clock) };
  const agent = new AgentService(
    database,
    clock,
    signer,
    tokens,
    {
      questionMaxChars: config.agentQuestionMaxChars,
      questionsPerSession: config.agentQuestionsPerSession,
      answerMaxChars: config.agentAnswerMaxChars,
    },
    model,
  );
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
      let first: IteratorResult<string, Answer>;
      try {
        outcome = await agent.ask(tenantId, audienceId, posted);
        if (outcome.kind === 'no-page') {
          return json
            ? sendProblem(request, reply, new AppError('not_found', 'This page has no agent.'))
            : sendErrorPage(reply, 404);
        }
        // Up to the first piece of the answer: the question is checked, counted and stored (or refused) by then.
        first = await outcome.answer.next();
      } catch (error) {
        if (error instanceof AppError && error.status < 500) return refuse(request, reply, json, error, question);
        throw error;
      }
      const { page, answer: stream } = outcome;
      if (json) {
        // A visitor who leaves before the stream is read ends the answer too (its provider slot is freed, it is stored).
        reply.raw.once('close', () => void stream.return(undefined as never).catch(() => undefined));
        return reply
          .code(200)
          .header('content-type', 'application/x-ndjson; charset=utf-8')
          .header('x-content-type-options', 'nosniff')
          .send(Readable.from(answerLines(first, outcome.answer, page, request.log)));
      }
      // Without script: the whole answer, as a page.
      let step = first;
      while (!step.done) step = await outcome.answer.next();
      const answer = step.value;
      noteFallback(request.log, answer);
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
