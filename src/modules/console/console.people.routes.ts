import type { FastifyPluginAsync } from 'fastify';
import { findAccountByDomain, getAccount, listAccounts } from '../accounts/index.js';
import { visitsOfPerson } from '../audience-sessions/index.js';
import { listPersonLogs } from '../person-logs/index.js';
import { findPerson, getPerson, searchPersons } from '../persons/index.js';
import { queryText, sendHtml, userOf } from './console.http.js';
import {
  renderAccount,
  renderAccounts,
  renderPeople,
  renderPerson,
  type PersonView,
  type TimelineEntry,
} from './console.people.views.js';

/** Rows on one screen of a list or a search. */
const PAGE_SIZE = 50;
/** Log entries and visits on a person's timeline (each; the newest). */
const TIMELINE_EACH = 50;
/** How much of a log entry's payload the timeline shows. */
const PAYLOAD_SHOWN = 300;

/** A log entry's payload in one line: the question or the form, else its JSON (cut). */
function payloadText(type: string, payload: Record<string, unknown>): string {
  if (type === 'agent-question' && typeof payload.question === 'string') return `Asked: “${payload.question}”`;
  const text = JSON.stringify(payload);
  return text.length > PAYLOAD_SHOWN ? `${text.slice(0, PAYLOAD_SHOWN)}…` : text;
}

function moreHref(base: string, query: string, cursor: string | null): string | null {
  if (cursor === null) return null;
  const next = new URLSearchParams();
  if (query !== '') next.set('q', query);
  next.set('cursor', cursor);
  return `${base}?${next.toString()}`;
}

/**
 * People (docs/console.md): persons search, a person's profile and timeline, accounts and their
 * linked persons; through the persons, person-logs, accounts and audience-sessions services.
 */
export const consolePeopleRoutes: FastifyPluginAsync = async (app) => {
  const { pager } = app.ctx;

  app.get('/people', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const query = queryText(request, 'q').trim();
    if (query === '') return sendHtml(reply, renderPeople({ viewer: user, query, persons: null, nextHref: null }));
    const cursor = queryText(request, 'cursor', 1000) || undefined;
    const envelope = await pager.list(
      user.tenantId,
      { cursor, limit: PAGE_SIZE },
      {
        context: `persons.search:${query}`,
        fetch: (window) => searchPersons(user.scope, query, window),
        keyOf: (p) => [p.personId],
      },
    );
    return sendHtml(
      reply,
      renderPeople({
        viewer: user,
        query,
        persons: envelope.items,
        nextHref: moreHref('/console/people', query, envelope.nextCursor),
      }),
    );
  });

  app.get<{ Params: { person_id: string } }>(
    '/people/:person_id',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const person = await getPerson(user.scope, request.params.person_id);
      const row = await findPerson(user.scope, person.personId);
      const accountDomain = row?.account_domain ?? null;
      const [account, logs, visits] = await Promise.all([
        accountDomain === null ? undefined : findAccountByDomain(user.scope, accountDomain),
        listPersonLogs(
          user.scope,
          { personId: person.personId, source: null, type: null },
          { limit: TIMELINE_EACH, after: null },
        ),
        visitsOfPerson(user.scope, person.personId, TIMELINE_EACH),
      ]);
      const timeline: TimelineEntry[] = [
        ...logs.items.slice(0, TIMELINE_EACH).map((e) => ({
          kind: 'log' as const,
          at: e.createdAt,
          source: e.source,
          type: e.type,
          text: payloadText(e.type, e.payload),
        })),
        ...visits.map((s) => ({
          kind: 'visit' as const,
          at: s.sessionStartedAt,
          pageId: s.pageId,
          pageTitle: s.pageTitle,
          seconds: s.timeSpentSeconds,
          scroll: s.maxScrollDepthPercentage,
          converted: s.hasConversion,
          submitted: s.hasFormSubmit,
          questions: s.questionsAskedCount,
          utmSource: s.utmSource,
        })),
      ].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
      const accountView = account === undefined ? null : await getAccount(user.scope, account.id);
      return sendHtml(
        reply,
        renderPerson({
          viewer: user,
          person,
          account: accountView,
          accountDomain,
          timeline,
          logsTotal: logs.totalCount,
        }),
      );
    },
  );

  app.get('/accounts', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const query = queryText(request, 'q').trim();
    const cursor = queryText(request, 'cursor', 1000) || undefined;
    const envelope = await pager.list(
      user.tenantId,
      { cursor, limit: PAGE_SIZE },
      {
        context: `accounts.search:false:${query}`,
        fetch: (window) => listAccounts(user.scope, window, { emptyOnly: false, text: query === '' ? null : query }),
        keyOf: (a) => [a.accountId],
      },
    );
    return sendHtml(
      reply,
      renderAccounts({
        viewer: user,
        query,
        accounts: envelope.items,
        totalCount: envelope.totalCount,
        nextHref: moreHref('/console/accounts', query, envelope.nextCursor),
      }),
    );
  });

  app.get<{ Params: { account_id: string } }>(
    '/accounts/:account_id',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const account = await getAccount(user.scope, request.params.account_id);
      return sendHtml(reply, renderAccount({ viewer: user, account, persons: account.linkedPersons as PersonView[] }));
    },
  );
};
