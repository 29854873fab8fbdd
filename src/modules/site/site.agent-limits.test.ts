import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { agentMessageCount, linkOnHost, visit } from '../../../test/factories/site.js';
import { FakeOpenAI } from '../../../test/fakes/openai-server.js';
import { problem, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';

/**
 * The agent's limits per client address and per page, and the answer's length (docs/agent.md,
 * Limits), with a model configured (the fake provider): whatever is refused is refused before the
 * provider, with a clear message and Retry-After, and writes nothing; a flood never answers 5xx.
 * The per-session limit and the question's length: site.agent.test.ts; the daily token budget:
 * site.agent-model.test.ts.
 */
let t: TestApp;
let fake: FakeOpenAI;
let alice: Tenant;
/** One page per test, so that each test meets only the per-page bucket of its own page. */
const PAGES = ['Acme', 'Globex', 'Initech', 'Umbrella'] as const;
const views: Record<string, string> = {};

const HOST = 'limits.alice.localhost';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const PER_MINUTE = 3;
const PER_PAGE_PER_SECOND = 1; // a burst of five seconds' worth: 5
const ANSWER_MAX_CHARS = 120;
const LONG_ENTRY = `Our free trial lasts fourteen days. ${'Every plan includes unlimited pages and audiences. '.repeat(8)}`;
const viewOf = (html: string) => /<meta name="ap-view" content="([^"]+)"/.exec(html)![1]!;

/** A question from `address` (the client address the limits count), in the visit `s` if given. */
function ask(v: string, q: string, address: string, s?: string) {
  return t.app.inject({
    method: 'POST',
    url: '/_ap/ask',
    remoteAddress: address,
    headers: { host: HOST, 'content-type': 'application/json', 'user-agent': UA },
    payload: JSON.stringify({ v, q, s }),
  });
}

/** A visit of the page (the conversation is stored with it): its session token. */
async function startVisit(v: string, address: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_ap/collect',
    remoteAddress: address,
    headers: { host: HOST, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA },
    payload: JSON.stringify({ t: 'start', v, u: `http://${HOST}/offers/acme` }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().s as string;
}

const messageCount = () => agentMessageCount(t);

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  t = await startTestApp({
    config: {
      PAGE_EVENTS_PER_SECOND: '0',
      PAGE_EVENTS_PER_PAGE_PER_SECOND: '0',
      AGENT_QUESTIONS_PER_MINUTE: String(PER_MINUTE),
      AGENT_QUESTIONS_PER_PAGE_PER_SECOND: String(PER_PAGE_PER_SECOND),
      AGENT_ANSWER_MAX_CHARS: String(ANSWER_MAX_CHARS),
      LLM_BASE_URL: fake.baseUrl,
      LLM_MODEL: 'agent-model',
      LLM_TIMEOUT_MS: '2000',
      LLM_DAILY_TOKEN_BUDGET: '0',
    },
  });
  alice = await t.createTenant('Alice');
  const topic = await t.request(alice, { method: 'POST', url: '/v0/topics', payload: { title: 'Pricing' } });
  await t.request(alice, {
    method: 'POST',
    url: `/v0/topics/${topic.json().topicId}/entries`,
    payload: { content: { type: 'answer', content: LONG_ENTRY } },
  });
  let tenantDomainId: string | null = null;
  for (const name of PAGES) {
    const made = await makeAudience(alice.scope, t.clock, { computedName: name, isNewPageAgent: true });
    const path = `/offers/${name.toLowerCase()}`;
    ({ tenantDomainId } = await linkOnHost(t, alice, {
      ...(tenantDomainId === null ? { hostname: HOST } : { tenantDomainId }),
      path,
      audienceId: made.audienceId,
    }));
    views[name] = viewOf((await visit(t, HOST, path)).body);
  }
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.otherwise = { stream: ['The trial ', 'lasts fourteen days.'] };
});

it('refuses a client address over its questions per minute, before the provider, and writes nothing', async () => {
  const address = '203.0.113.7';
  const view = views.Globex!;
  // in a visit, so that an answered question is stored (and a refused one would be seen if it were)
  const visit = await startVisit(view, address);
  for (let i = 0; i < PER_MINUTE; i++) expect((await ask(view, `trial? ${i}`, address, visit)).statusCode).toBe(200);
  const before = { messages: await messageCount(), calls: fake.requests.length };
  expect(before.messages).toBeGreaterThanOrEqual(2 * PER_MINUTE);
  const refused = await ask(view, 'how long is the trial?', address, visit);
  expect(refused.statusCode).toBe(429);
  expect(problem(refused).code).toBe('rate_limited');
  expect(problem(refused).detail).toMatch(/Too many questions from your address; please try again in \d+ s\./);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect({ messages: await messageCount(), calls: fake.requests.length }).toEqual(before);
  // another address is not held to it; an IPv6 address counts by its /64 (on a page of its own)
  expect((await ask(view, 'trial?', '203.0.113.8')).statusCode).toBe(200);
  for (let i = 0; i < PER_MINUTE; i++) {
    expect((await ask(views.Initech!, `trial? ${i}`, `2001:db8:1:2::${i + 1}`)).statusCode).toBe(200);
  }
  expect((await ask(views.Initech!, 'trial?', '2001:db8:1:2:ffff::9')).statusCode).toBe(429);
});

it('a flood on one page: at most a burst reaches the provider, the rest refused for the page, never a 5xx', async () => {
  const addresses = Array.from({ length: 30 }, (_, i) => `198.51.100.${i + 1}`);
  const visits = await Promise.all(addresses.map((address) => startVisit(views.Acme!, address)));
  const before = { messages: await messageCount(), calls: fake.requests.length };
  const answers = await Promise.all(
    addresses.map((address, i) => ask(views.Acme!, `is there a trial? ${i}`, address, visits[i])),
  );
  const statuses = answers.map((a) => a.statusCode);
  expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  const answered = statuses.filter((s) => s === 200).length;
  // a burst of five seconds' worth (a token may refill while the flood runs)
  expect(answered).toBeGreaterThanOrEqual(5 * PER_PAGE_PER_SECOND);
  expect(answered).toBeLessThanOrEqual(5 * PER_PAGE_PER_SECOND + 1);
  const refused = answers.find((a) => a.statusCode === 429)!;
  expect(problem(refused).detail).toMatch(/Too many questions for this page/);
  expect(fake.requests.length - before.calls).toBe(answered);
  // a question and an answer for each one answered, nothing for the others
  expect((await messageCount()) - before.messages).toBe(2 * answered);
});

it('cuts an answer at AGENT_ANSWER_MAX_CHARS, the model’s and the extractive one', async () => {
  fake.otherwise = { stream: ['Fourteen days. '.repeat(40)] };
  const fromModel = await ask(views.Umbrella!, 'how long is the free trial?', '192.0.2.10');
  expect(fromModel.statusCode).toBe(200);
  const lines = (body: string) =>
    body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { t: string; v?: string; text?: string });
  const streamed = (body: string) =>
    lines(body)
      .filter((l) => l.t === 'text')
      .map((l) => l.v)
      .join('');
  // the text as the widget shows it at the end: the final line's, when it replaces the pieces
  const text = (body: string) => lines(body).at(-1)!.text ?? streamed(body);
  // the model's own words, cut: what streamed and what stays both within the limit
  expect(streamed(fromModel.body)).toMatch(/^Fourteen days\. Fourteen days\./);
  expect(streamed(fromModel.body).length).toBeGreaterThan(ANSWER_MAX_CHARS / 2);
  expect(streamed(fromModel.body).length).toBeLessThanOrEqual(ANSWER_MAX_CHARS);
  expect(text(fromModel.body).length).toBeLessThanOrEqual(ANSWER_MAX_CHARS);
  fake.otherwise = { status: 500, message: 'down' };
  const extractive = await ask(
    views.Umbrella!,
    'does every plan of the free trial include unlimited pages and audiences?',
    '192.0.2.11',
  );
  expect(extractive.statusCode).toBe(200);
  expect(text(extractive.body)).toMatch(/^“Every plan includes unlimited pages and audiences\./);
  expect(text(extractive.body).length).toBeGreaterThan(ANSWER_MAX_CHARS / 2);
  expect(text(extractive.body).length).toBeLessThanOrEqual(ANSWER_MAX_CHARS);
});
