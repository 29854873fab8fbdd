import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePerson } from '../../../test/factories/persons.js';
import { agentMessageCount, linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let alice: Tenant;
let bob: Tenant;
let audienceId: string;
let pageId: string;
let view: string;
let bobsView: string;

const HOST = 'ask.alice.localhost';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const viewOf = (html: string) => /<meta name="ap-view" content="([^"]+)"/.exec(html)![1]!;

function ask(body: Record<string, unknown>, host = HOST, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/_ap/ask',
    headers: { host, 'content-type': 'application/json', 'user-agent': UA, ...headers },
    payload: JSON.stringify(body),
  });
}

function askWithoutScript(fields: Record<string, string>, host = HOST) {
  return t.app.inject({
    method: 'POST',
    url: '/_ap/ask',
    headers: {
      host,
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': UA,
      referer: `http://${host}/offers/acme`,
    },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The NDJSON lines of a streamed answer: its text, and the final line. */
function streamed(body: string) {
  const lines = body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const text = lines
    .filter((l) => l.t === 'text')
    .map((l) => l.v)
    .join('');
  return { text, done: lines.at(-1), pieces: lines.length - 1 };
}

async function startSession(v = view, landing = `http://${HOST}/offers/acme`) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_ap/collect',
    headers: { host: HOST, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA },
    payload: JSON.stringify({ t: 'start', v, u: landing }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().s as string;
}

const sessionIdOf = (token: string) => token.split('.')[0]!;
const sessionRow = (id: string) =>
  t.database.kysely.selectFrom('audience_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const messageCount = () => agentMessageCount(t);

beforeAll(async () => {
  t = await startTestApp({
    config: {
      PAGE_EVENTS_PER_SECOND: '0',
      PAGE_EVENTS_PER_PAGE_PER_SECOND: '0',
      AGENT_QUESTIONS_PER_MINUTE: '0',
      AGENT_QUESTIONS_PER_PAGE_PER_SECOND: '0',
      AGENT_QUESTIONS_PER_SESSION: '4',
      AGENT_QUESTION_MAX_CHARS: '200',
    },
  });
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
  const topic = await t.request(alice, { method: 'POST', url: '/v0/topics', payload: { title: 'Pricing' } });
  await t.request(alice, {
    method: 'POST',
    url: `/v0/topics/${topic.json().topicId}/entries`,
    payload: { content: { type: 'answer', content: 'Yes: a free trial of 14 days, no credit card needed.' } },
  });
  ({ audienceId, pageId } = await makeAudience(alice.scope, t.clock, { computedName: 'Acme', isNewPageAgent: true }));
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId });
  view = viewOf((await visit(t, HOST, '/offers/acme')).body);
  const bobs = await makeAudience(bob.scope, t.clock, { isNewPageAgent: true });
  await linkOnHost(t, bob, { hostname: 'ask.bob.localhost', path: '/b', audienceId: bobs.audienceId });
  bobsView = viewOf((await visit(t, 'ask.bob.localhost', '/b')).body);
});
afterAll(() => t.close());

describe('the widget on the page', () => {
  it('is on a page whose version has isNewPageAgent, the same bytes for every visitor', async () => {
    const first = await visit(t, HOST, '/offers/acme');
    const html = first.body;
    expect(html).toContain('<label for="ap-agent-q">Ask a question</label>');
    expect(html).toMatch(/<button type="submit" class="ap-button ap-agent-send">\s*Send\s*<\/button>/);
    expect(html).toContain('aria-live="polite"');
    expect(html).toContain('action="/_ap/ask"');
    const second = await visit(t, HOST, '/offers/acme', { 'user-agent': 'another visitor' });
    expect(second.body).toBe(html);
  });

  it('is not on a page without the agent', async () => {
    const plain = await makeAudience(alice.scope, t.clock, { isNewPageAgent: false });
    await linkOnHost(t, alice, { tenantDomainId: null, path: '/plain', audienceId: plain.audienceId });
    const html = (await visit(t, HOST, '/plain')).body;
    expect(html).toContain('<h1');
    expect(html).not.toContain('ap-agent');
    // Its view token asks nothing: the page has no agent.
    const res = await ask({ v: viewOf(html), q: 'Is there a free trial?' });
    expect(res.statusCode).toBe(404);
  });
});

describe('POST /_ap/ask', () => {
  it('streams an answer from a topic entry with its source, counts it and stores the conversation', async () => {
    const token = await startSession();
    for (const q of ['Is there a free trial?', 'Do you need a credit card?', 'What about the weather on Mars?']) {
      const res = await ask({ v: view, q, s: token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toContain('application/x-ndjson');
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const row = await sessionRow(sessionIdOf(token));
    expect(row.questions_asked_count).toBe(3);

    const messages = await t.request(alice, {
      method: 'GET',
      url: `/v0/pages/${pageId}/audience_sessions/${sessionIdOf(token)}/messages`,
    });
    expect(messages.statusCode, messages.body).toBe(200);
    const body = messages.json();
    expect(body.totalCount).toBe(6);
    expect(body.items.map((m: { role: string }) => m.role)).toEqual([
      'visitor',
      'agent',
      'visitor',
      'agent',
      'visitor',
      'agent',
    ]);
    expect(body.items[0]).toEqual({
      role: 'visitor',
      content: 'Is there a free trial?',
      sources: [],
      createdAt: t.clock.now().toISOString(),
    });
    expect(body.items[1].content).toContain('free trial of 14 days');
    expect(body.items[1].sources).toEqual([{ kind: 'topic_entry', label: 'Pricing' }]);
    expect(body.items[5].sources).toEqual([]);
    expect(body.items[5].content).toMatch(/don't know/);
  });

  it('answers in pieces, then names the sources; says plainly when nothing is known and offers the action', async () => {
    const res = await ask({ v: view, q: 'Is there a free trial?' });
    const { text, done, pieces } = streamed(res.body);
    expect(pieces).toBeGreaterThan(3);
    expect(text).toBe('“Yes: a free trial of 14 days, no credit card needed.”');
    expect(done).toEqual({
      t: 'done',
      text,
      sources: [{ kind: 'topic_entry', label: 'Pricing' }],
      answered: true,
      action: null,
    });

    const unknown = streamed((await ask({ v: view, q: 'Quantum chromodynamics?' })).body);
    expect(unknown.text).toBe(
      "I don't know the answer to that from what this page knows. You can Book a demo instead.",
    );
    expect(unknown.done).toMatchObject({
      answered: false,
      action: { title: 'Book a demo', href: 'https://example.com/book' },
    });
  });

  it('works without script: a form post returns an answer page, never cached, everything escaped', async () => {
    const res = await askWithoutScript({ v: view, q: 'Free trial? <script>alert(1)</script>' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('free trial of 14 days');
    expect(res.body).toContain('Sources: Pricing');
    expect(res.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain('<a href="/offers/acme">Back to the page</a>');
  });

  it('refuses what breaks a limit with a clear message, and writes nothing', async () => {
    const token = await startSession();
    const before = await messageCount();
    const long = await ask({ v: view, q: 'x'.repeat(201), s: token });
    expect(long.statusCode).toBe(422);
    expect(problem(long).detail).toMatch(/under 200 characters/);
    const empty = await ask({ v: view, q: '   ', s: token });
    expect(empty.statusCode).toBe(422);
    expect(await messageCount()).toBe(before);
    for (let i = 0; i < 4; i++) expect((await ask({ v: view, q: `trial ${i}`, s: token })).statusCode).toBe(200);
    const fifth = await ask({ v: view, q: 'one more trial?', s: token });
    expect(fifth.statusCode).toBe(429);
    expect(problem(fifth).code).toBe('question_limit_reached');
    expect((await sessionRow(sessionIdOf(token))).questions_asked_count).toBe(4);
    expect(await messageCount()).toBe(before + 8);
    const page = await askWithoutScript({ v: view, q: 'y'.repeat(201) });
    expect(page.statusCode).toBe(422);
    expect(page.body).toContain('Please keep your question under 200 characters.');
  });

  it('never answers from another tenant, nor with another site’s view token or session', async () => {
    const other = await ask({ v: bobsView, q: 'Is there a free trial?' });
    expect(other.statusCode).toBe(404);
    const bobAsks = streamed((await ask({ v: bobsView, q: 'Is there a free trial?' }, 'ask.bob.localhost')).body);
    expect(bobAsks.done.answered).toBe(false);
    const crossSite = await ask({ v: view, q: 'trial' }, HOST, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.statusCode).toBe(403);
    // A messages list of another tenant's session is a 404.
    const token = await startSession();
    const res = await t.request(bob, {
      method: 'GET',
      url: `/v0/pages/${pageId}/audience_sessions/${sessionIdOf(token)}/messages`,
    });
    expect(res.statusCode).toBe(404);
  });

  it('writes the question to the person’s log on the person’s own page', async () => {
    const personId = await makePerson(alice.scope, t.clock, { email: 'jane@acme.example' });
    const own = await makeAudience(alice.scope, t.clock, {
      isNewPageAgent: true,
      personId,
      personRouteKey: 'jane',
    });
    await linkOnHost(t, alice, { tenantDomainId: null, path: '/jane', audienceId: own.audienceId });
    const v = viewOf((await visit(t, HOST, '/jane')).body);
    expect((await ask({ v, q: 'Is there a free trial?' })).statusCode).toBe(200);
    const logs = await t.database.kysely
      .selectFrom('person_logs')
      .selectAll()
      .where('person_id', '=', personId)
      .where('source', '=', 'page-agent')
      .execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ type: 'agent-question' });
    expect(JSON.stringify(logs[0]!.payload)).toContain('Is there a free trial?');
  });
});
