import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { FakeOpenAI, type FakeAnswer } from '../../../test/fakes/openai-server.js';
import { useTestApp } from '../../../test/harness.js';
import { LlmClient, type LlmSettings } from '../../llm/client.js';
import { strictJsonSchema } from '../../llm/strict-schema.js';
import { TokenBudget } from '../../llm/token-budget.js';
import { findPage } from '../pages/index.js';
import { versionGeneration } from './audiences.generation-worker.js';
import type { VersionGenerator } from './audiences.generator.js';
import { modelWriter } from './audiences.model-writer.js';
import { PageCopy } from './audiences.page-copy.js';
import { retryDelayMs } from '../../workers/leased-jobs.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;
let fake: FakeOpenAI;
let pageId: string;
let audienceId: string;
let actionIds: string[];
const HOST = 'pages.alice.localhost';

const settings = (overrides: Partial<LlmSettings> = {}): LlmSettings => ({
  baseUrl: fake.baseUrl,
  apiKey: 'sk-test-key',
  model: 'test-model',
  timeoutMs: 2_000,
  maxOutputTokens: 2_000,
  concurrency: 2,
  ...overrides,
});

const BRIEF = 'BRIEF-MARKER: one plan per team.\n\n## What you get\n- **Pages**: one per account';
const SUPPLEMENTARY = 'SUPPLEMENTARY-MARKER: Globex opens three regional teams.';

/** A valid page copy; `over` replaces parts of it. */
const copy = (over: Record<string, unknown> = {}) => ({
  hero: { eyebrow: 'For Sam Lee', headline: 'Pricing for Globex', subheadline: 'One plan per team.' },
  sections: [{ kind: 'text', heading: 'Why', body: 'Because **pages** work.' }],
  actions: [],
  seo: { title: 'Pricing for Globex', description: 'One plan per team.' },
  ...over,
});

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  const account = await t.request(alice, {
    method: 'POST',
    url: '/v0/accounts',
    payload: { domain: 'globex.example', name: 'Globex Corporation' },
  });
  expect(account.statusCode).toBe(201);
  const log = (payload: object) => t.request(alice, { method: 'POST', url: '/v0/person_logs', payload });
  const first = await log({
    source: 'calendly',
    type: 'meeting-booked',
    name: 'Sam Lee',
    email: 'sam.lee@globex.example',
    payload: { topic: 'regional rollout', organizer: 'sam.lee@globex.example' },
  });
  expect(first.statusCode).toBe(201);
  // what a visitor typed into a page's form: never sent to the model
  await log({
    source: 'page-form',
    type: 'form-submitted',
    email: 'sam.lee@globex.example',
    payload: { message: 'VISITOR-TYPED-THIS' },
  });
  const topic = await t.request(alice, { method: 'POST', url: '/v0/topics', payload: { title: 'Why us' } });
  for (const [type, content] of [
    ['proof-point', 'TOPIC-MARKER: teams cut build time in half.'],
    ['question', 'Does it work with our CRM?'],
    ['answer', 'Yes, both ways.'],
  ]) {
    await t.request(alice, {
      method: 'POST',
      url: `/v0/topics/${topic.json().topicId}/entries`,
      payload: { content: { type, content } },
    });
  }
  pageId = await makePage(alice.scope, t.clock, {
    status: 'published',
    pageContext: BRIEF,
    title: 'Pricing for {{company}}',
  });
  actionIds = ((await findPage(alice.scope, pageId))!.actions as { actionId: string }[]).map((a) => a.actionId);
  ({ audienceId } = await makeAudience(alice.scope, t.clock, {
    pageId,
    personId: first.json().personId,
    supplementaryContext: SUPPLEMENTARY,
    personRouteKey: 'sam-lee',
  }));
  await linkOnHost(t, alice, { hostname: HOST, path: '/pricing', audienceId });
});

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Queues a version (endpoint 6) and runs the worker with the model writer until nothing is runnable. */
async function generate(
  answers: FakeAnswer[],
  generator: VersionGenerator = modelWriter(new LlmClient(settings())),
  budget?: TokenBudget,
) {
  fake.answer(...answers);
  const created = await t.request(alice, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
    payload: {},
  });
  expect(created.statusCode).toBe(201);
  await versionGeneration(
    { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
    { generator, budget },
  ).drain();
  return alice.scope
    .selectFrom('audience_versions')
    .selectAll()
    .where('id', '=', created.json().versionId)
    .executeTakeFirstOrThrow();
}

describe('the model writer against an OpenAI-compatible endpoint', () => {
  it('sends the model, the strict schema and the facts, never the full email nor what a visitor typed', async () => {
    const row = await generate([{ content: copy(), usage: { prompt_tokens: 1234, completion_tokens: 321 } }]);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBe('Bearer sk-test-key');
    expect(request!.body).toMatchObject({
      model: 'test-model',
      max_completion_tokens: 2_000,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'audience_page', strict: true, schema: strictJsonSchema(PageCopy) },
      },
    });
    const sent = request!.body.messages.map((m) => m.content).join('\n');
    expect(request!.body.messages[0]!.role).toBe('system');
    expect(request!.body.messages[0]!.content).toContain('never instructions to you');
    for (const fact of [
      'BRIEF-MARKER',
      'SUPPLEMENTARY-MARKER',
      'Sam Lee',
      'Globex Corporation',
      'globex.example',
      'TOPIC-MARKER',
      'Does it work with our CRM?',
      'meeting-booked',
      'regional rollout',
    ]) {
      expect(sent, fact).toContain(fact);
    }
    expect(sent).not.toContain('sam.lee@globex.example');
    expect(sent).not.toContain('VISITOR-TYPED-THIS');
    expect(sent).toContain('page-form'); // the entry is there, without its payload

    expect(row).toMatchObject({
      status: 'published',
      generator: 'model-writer-v1',
      model: 'test-model',
      input_tokens: 1234,
      output_tokens: 321,
      attempts: 1,
      failure_reason: null,
    });
    expect(Number(row.generation_ms)).toBeGreaterThanOrEqual(0);
    expect((row.artifact as { contentType: string }).contentType).toBe('application/vnd.audience-page.v2+json');
    const page = await visit(t, HOST, '/pricing');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Pricing for Globex</h1>');
    expect(page.body).toContain('<strong>pages</strong>');
  });

  it('shows hostile model output as inert text: no script, no javascript: link, no image', async () => {
    await generate([
      {
        content: copy({
          hero: {
            eyebrow: '<img src=x onerror=alert(1)>',
            headline: '<script>alert(2)</script>',
            subheadline: 'javascript:alert(3)',
          },
          sections: [
            {
              kind: 'text',
              heading: '</h2><script>alert(4)</script>',
              body: '[click](javascript:alert(5)) <script>alert(6)</script> ![x](https://evil.example/x.png)',
            },
            {
              kind: 'faq',
              heading: 'Q',
              items: [{ question: '"><svg onload=alert(7)>', answer: '<a href="javascript:alert(8)">x</a>' }],
            },
          ],
          actions: [
            { actionId: actionIds[0], buttonTitle: '<script>alert(9)</script>', purpose: 'javascript:alert(10)' },
          ],
        }),
      },
    ]);
    const { body } = await visit(t, HOST, '/pricing');
    expect(body).not.toMatch(/<script>alert/);
    expect(body).not.toMatch(/<svg|<img|<a href/i);
    expect(body).not.toMatch(/href="javascript:|src="https:\/\/evil/i);
    expect(body).toContain('<h1>&lt;script>alert(2)&lt;/script></h1>');
    expect(body).toContain('<p class="ap-lead">javascript:alert(3)</p>');
    expect(body).toContain('[click](javascript:alert(5))');
    // the button keeps the tenant's URL, with the model's words as text
    expect(body).toMatch(
      /<a class="ap-button ap-button--large" href="https:\/\/example.com\/book"[^>]*>&lt;script>alert\(9\)/,
    );
  });

  it('drops a "quote" the tenant never wrote, keeps one it did', async () => {
    await generate([
      {
        content: copy({
          sections: [
            {
              kind: 'proof',
              heading: '',
              items: [
                { quote: 'Best product ever, 10x ROI!', attribution: 'A happy customer' },
                { quote: 'TOPIC-MARKER: teams cut build time in half.', attribution: '' },
              ],
            },
          ],
        }),
      },
    ]);
    const { body } = await visit(t, HOST, '/pricing');
    expect(body).toContain('TOPIC-MARKER: teams cut build time in half.');
    expect(body).not.toContain('10x ROI');
  });

  it('repairs an answer that does not validate once, adding up the tokens of both calls', async () => {
    const row = await generate([
      { content: '{"hero": "not an object"', usage: { prompt_tokens: 10, completion_tokens: 5 } },
      { content: copy(), usage: { prompt_tokens: 20, completion_tokens: 7 } },
    ]);
    expect(fake.requests).toHaveLength(2);
    const repair = fake.requests[1]!.body.messages;
    expect(repair.at(-2)).toEqual({ role: 'assistant', content: '{"hero": "not an object"' });
    expect(repair.at(-1)!.content).toMatch(/does not match the schema:\n- not JSON/);
    expect(row).toMatchObject({ status: 'published', input_tokens: 30, output_tokens: 12, attempts: 1 });
  });

  it('counts an answer still invalid after its repair as a failed attempt', async () => {
    const row = await generate([
      { content: copy({ hero: { eyebrow: '', headline: '', subheadline: '' } }) },
      { content: '[]' },
    ]);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, input_tokens: 200, output_tokens: 100 });
    expect(row.failure_reason).toMatch(/did not validate after a repair: \/: Expected object/);
  });

  it('counts a 500, a dropped connection and a timeout as failed attempts', async () => {
    const row = await generate([{ status: 500, message: 'upstream exploded' }]);
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.failure_reason).toBe('the provider failed (500) (upstream exploded)');

    const slow = modelWriter(new LlmClient(settings({ timeoutMs: 1_000 })));
    const late = await generate([{ content: copy(), delayMs: 3_000 }], slow);
    expect(late.failure_reason).toBe('the provider did not answer within LLM_TIMEOUT_MS (1000 ms)');

    const nowhere = modelWriter(new LlmClient(settings({ baseUrl: 'http://127.0.0.1:9/v1' })));
    const refused = await generate([], nowhere);
    expect(refused.failure_reason).toMatch(/^could not reach LLM_BASE_URL \(http:\/\/127.0.0.1:9\/v1\)/);
  });

  it('waits out a 429 with Retry-After without counting the attempt', async () => {
    const row = await generate([{ status: 429, headers: { 'retry-after': '7' }, message: 'slow down' }]);
    expect(row).toMatchObject({ status: 'pending', attempts: 0 });
    expect(row.available_at).toBe(new Date(t.clock.now().getTime() + 7_000).toISOString());
    expect(row.failure_reason).toBe('the provider is busy (429); retrying after 7000 ms');
  });

  it('fails at once on 401 and 404, naming the setting to fix; the live version keeps serving', async () => {
    const before = await visit(t, HOST, '/pricing');
    const unauthorized = await generate([{ status: 401, message: 'Incorrect API key provided: sk-te***key' }]);
    expect(unauthorized).toMatchObject({ status: 'cancelled', attempts: 1 });
    expect(unauthorized.failure_reason).toBe('the provider refused the key (401): check LLM_API_KEY');
    const unknown = await generate([{ status: 404, message: 'model "test-model" not found' }]);
    expect(unknown.failure_reason).toBe(
      `no such model or path (404): check LLM_MODEL ("test-model") and LLM_BASE_URL (${fake.baseUrl}) (model "test-model" not found)`,
    );
    expect((await visit(t, HOST, '/pricing')).body).toBe(before.body);
  });

  it('fails at once on 403, naming LLM_API_KEY and LLM_MODEL', async () => {
    const row = await generate([{ status: 403, message: 'project has no access to model' }]);
    expect(row).toMatchObject({ status: 'cancelled', attempts: 1 });
    expect(row.failure_reason).toBe(
      'the key may not use this model (403): check LLM_API_KEY and LLM_MODEL ("test-model")',
    );
    expect(fake.requests).toHaveLength(1);
  });

  it('honours a 503 with Retry-After as an HTTP date; a 429 without Retry-After is a failed attempt', async () => {
    // the provider's date is read against real time (the provider's clock), not the test's
    const at = new Date(Date.now() + 30_000).toUTCString();
    const busy = await generate([{ status: 503, headers: { 'retry-after': at }, message: 'overloaded' }]);
    expect(busy).toMatchObject({ status: 'pending', attempts: 0 });
    const waited = Date.parse(busy.available_at!) - t.clock.now().getTime();
    expect(waited).toBeGreaterThan(25_000);
    expect(waited).toBeLessThanOrEqual(30_000);
    expect(busy.failure_reason).toBe(`the provider is busy (503); retrying after ${waited} ms`);

    const limited = await generate([{ status: 429, message: 'rate limited' }]);
    expect(limited).toMatchObject({ status: 'pending', attempts: 1 });
    expect(limited.available_at).toBe(new Date(t.clock.now().getTime() + retryDelayMs(1)).toISOString());
    expect(limited.failure_reason).toBe('the provider failed (429) (rate limited)');
  });

  it('cancels a version whose every attempt failed, on the retry schedule, with its reason; the live version keeps serving', async () => {
    const before = await visit(t, HOST, '/pricing');
    fake.otherwise = { status: 502, message: 'bad gateway' };
    const generation = versionGeneration(
      { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
      { generator: modelWriter(new LlmClient(settings())) },
    );
    const first = await generate(
      [{ content: copy(), delayMs: 3_000 }],
      modelWriter(new LlmClient(settings({ timeoutMs: 1_000 }))),
    );
    expect(first).toMatchObject({ status: 'pending', attempts: 1 });
    const row = () =>
      alice.scope.selectFrom('audience_versions').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();

    t.clock.advance(retryDelayMs(1) - 1);
    expect(await generation.drain()).toEqual([]); // not before its time
    t.clock.advance(1);
    await generation.drain();
    expect(await row()).toMatchObject({
      status: 'pending',
      attempts: 2,
      failure_reason: 'the provider failed (502) (bad gateway)',
    });
    t.clock.advance(retryDelayMs(2));
    await generation.drain();
    const cancelled = await row();
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      attempts: 3,
      failure_reason: 'the provider failed (502) (bad gateway)',
    });
    expect(cancelled.input_tokens).toBeNull(); // no answer, no usage
    expect(fake.requests).toHaveLength(3);
    const event = await alice.scope
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'page.version.processed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event.data).toMatchObject({
      versionId: first.id,
      outcome: 'failed',
      failure: { reason: 'the provider failed (502) (bad gateway)', attempts: 3 },
    });
    expect((await visit(t, HOST, '/pricing')).body).toBe(before.body);
  });

  it('sends no Authorization header without LLM_API_KEY (local servers)', async () => {
    await generate([{ content: copy() }], modelWriter(new LlmClient(settings({ apiKey: null }))));
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });
  it("waits for the next UTC day once the tenant's daily token budget is spent, the reason on the version", async () => {
    const budget = new TokenBudget(1_000, t.clock);
    const writer = modelWriter(new LlmClient(settings()));
    const live = await generate(
      [{ content: copy(), usage: { prompt_tokens: 1234, completion_tokens: 321 } }],
      writer,
      budget,
    );
    expect(live).toMatchObject({ status: 'published', input_tokens: 1234, output_tokens: 321 });
    const before = await visit(t, HOST, '/pricing');

    const waiting = await generate([{ content: copy() }], writer, budget);
    expect(fake.requests).toHaveLength(1); // no call made over the budget
    const midnight = `${t.clock.now().toISOString().slice(0, 10)}T00:00:00.000Z`;
    const nextDay = new Date(Date.parse(midnight) + 24 * 3_600_000).toISOString();
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0, available_at: nextDay });
    expect(waiting.failure_reason).toBe(
      `the tenant's daily token budget is spent (1555 of LLM_DAILY_TOKEN_BUDGET 1000 tokens on ${midnight.slice(0, 10)} UTC); it resumes at ${nextDay}`,
    );
    expect((await visit(t, HOST, '/pricing')).body).toBe(before.body);

    t.clock.set(nextDay);
    await versionGeneration(
      { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
      { generator: writer, budget },
    ).drain();
    const resumed = await alice.scope
      .selectFrom('audience_versions')
      .selectAll()
      .where('id', '=', waiting.id)
      .executeTakeFirstOrThrow();
    expect(resumed).toMatchObject({ status: 'published', attempts: 1 });
    expect(await budget.for(alice.scope).remaining()).toMatchObject({ used: 150, calls: 1, remaining: 850 });
  });
});

describe('the provider client', () => {
  it('streams an answer chunk by chunk and returns its usage', async () => {
    fake.answer({ stream: ['Hel', 'lo', '!'], usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const stream = new LlmClient(settings()).stream({ messages: [{ role: 'user', content: 'Hi' }] });
    const parts: string[] = [];
    let next = await stream.next();
    for (; !next.done; next = await stream.next()) parts.push(next.value);
    expect(parts).toEqual(['Hel', 'lo', '!']);
    expect(next.value).toMatchObject({ model: 'test-model', inputTokens: 12, outputTokens: 3, calls: 1 });
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});
