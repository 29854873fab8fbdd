import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TenantScope } from '../../src/db/tenant-scope.js';
import { systemClock } from '../../src/lib/clock.js';
import { createPageLink } from '../../src/modules/page-links/page-links.service.js';
import { createTenantDomain } from '../../src/modules/tenant-domains/tenant-domains.service.js';
import { createApiKey, createTenant } from '../../src/modules/tenants/tenants.service.js';
import { createSubscription } from '../../src/modules/webhooks/webhooks.service.js';
import { allowEverything } from '../../src/net/address-policy.js';
import { makeAudience } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import {
  CANARY,
  startReceiver,
  TEST_SECRET_KEY,
  testPorts,
  testSecretBox,
  type Receiver,
} from '../factories/webhooks.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../harness.js';
import { startServerProcess } from '../process.js';

/**
 * kill -9 of the whole service, again and again, under load (issue 10): clients write person logs
 * (with idempotency keys) and accounts, create versions that the generation worker picks up, and
 * every event is delivered to a local receiver; the server is killed with SIGKILL at random
 * moments and started again. Afterwards nothing acknowledged may be missing, no email may belong
 * to two persons, an unanswered write retried with its key must give one id, every version must be
 * generated exactly once and every event delivered at least once. Visitors also submit a page's
 * form (issue 12): every submission that committed ends in exactly one enrichment event.
 * Versions are written by the model writer against the fake OpenAI-compatible provider (issue
 * 24), whose answers take over a second, so kills land while calls are in flight:
 * a call whose answer died with the process is made again, and the version is still stored once.
 *
 * Runs with `npm run test:crash` (its own vitest config), on SQLite and PostgreSQL.
 */

const ROUNDS = 5;
const CLIENTS = 6;
const EMAILS = 12;
const DOMAINS = 10;

let database: TestDatabase;
let receiver: Receiver;
let provider: FakeOpenAI;
let server: Awaited<ReturnType<typeof startServerProcess>> | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver(CANARY, () => ({ status: 200 }));
  provider = await FakeOpenAI.start();
  // Every call answers a valid page after 1.2 s: kills (at random moments) land mid-call.
  provider.otherwise = { content: MODEL_COPY, delayMs: 1_200 };
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  await receiver.close();
  await provider.close();
  await database.cleanup();
});

type LogOp = { kind: 'log'; key: string; body: Record<string, unknown> };
type AccountOp = { kind: 'account'; domain: string };
type VersionOp = { kind: 'version'; pageId: string; audienceId: string };
type FormOp = { kind: 'form'; token: string; email: string };
type Op = LogOp | AccountOp | VersionOp | FormOp;

/** What the fake provider writes for every version (a valid v2 copy). */
const MODEL_COPY = {
  hero: { eyebrow: 'For you', headline: 'A page written by the model', subheadline: 'From the facts given.' },
  sections: [],
  actions: [],
  seo: { title: 'A page written by the model', description: 'From the facts given.' },
};

/** The page host of the form, and what its hidden fields name (read from the served page). */
const FORM_HOST = `crash-${process.pid}.localhost`;
const form = { audienceId: '', actionId: '' };

/** One request to the page host (fetch cannot set Host). Resolves null when the process died. */
function pageRequest(
  baseUrl: string,
  method: 'GET' | 'POST',
  body?: unknown,
): Promise<{ status: number; text: string } | null> {
  return new Promise((resolve) => {
    const request = http.request(
      `${baseUrl}/contact`,
      {
        method,
        headers: { host: FORM_HOST, accept: 'application/json', 'content-type': 'application/json' },
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve(null));
      },
    );
    request.on('error', () => resolve(null));
    request.on('timeout', () => request.destroy());
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A visitor's form submission, as the page script sends it (a token per view). */
async function submit(baseUrl: string, op: FormOp): Promise<string | null> {
  const res = await pageRequest(baseUrl, 'POST', {
    email: op.email,
    name: 'Crash Visitor',
    ap_audience: form.audienceId,
    ap_action: form.actionId,
    ap_token: op.token,
  });
  if (res === null || res.status === 503) return null;
  if (res.status === 201 || res.status === 200)
    return (JSON.parse(res.text) as { formSubmissionId: string }).formSubmissionId;
  throw new Error(`form: unexpected ${res.status} ${res.text.slice(0, 300)}`);
}
/** What the service answered: an id, or nothing (the connection died with the process). */
type Outcome = { op: Op; id: string | null };

function serverEnv(): Record<string, string> {
  return {
    ...database.env,
    SECRET_KEY: TEST_SECRET_KEY,
    // The receiver is on loopback, on a port the system picked.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ALLOWED_PORTS: String(receiver.port),
    RATE_LIMIT_PER_SECOND: '0',
    AUTH_FAILURES_PER_MINUTE: '0',
    FORM_SUBMISSIONS_PER_MINUTE: '0',
    // Durability, not the fill time (site.forms-fill-time.test.ts): forms go at once.
    FORM_MIN_FILL_MS: '0',
    // A delivery in flight at the kill is retried when its lease (2 timeouts + 1 s) ends.
    WEBHOOK_TIMEOUT_MS: '2000',
    // Generation through the fake provider (the model writer), not the built-in writer.
    LLM_BASE_URL: provider.baseUrl,
    LLM_MODEL: 'crash-model',
    LLM_TIMEOUT_MS: '10000',
    LLM_DAILY_TOKEN_BUDGET: '0',
  };
}

async function send(baseUrl: string, apiKey: string, op: Op): Promise<string | null> {
  if (op.kind === 'form') return submit(baseUrl, op);
  const [url, body] =
    op.kind === 'log'
      ? ['/v0/person_logs', { ...op.body, idempotencyKey: op.key }]
      : op.kind === 'account'
        ? ['/v0/accounts', { domain: op.domain }]
        : [`/v0/pages/${op.pageId}/audiences/${op.audienceId}/versions`, {}];
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
  } catch {
    return null; // killed before it answered: unknown
  }
  const json = (await res.json().catch(() => null)) as Record<string, string> | null;
  if (res.status === 201) return json!.personLogId ?? json!.accountId ?? json!.versionId ?? null;
  // An account that exists already names itself: the same id a retry must see.
  if (op.kind === 'account' && res.status === 409 && json?.code === 'account_exists') return json.accountId ?? null;
  // 503 while shutting down is no answer either; anything else is a bug.
  if (res.status === 503) return null;
  throw new Error(`${url}: unexpected ${res.status} ${JSON.stringify(json)}`);
}

it('loses nothing acknowledged across repeated kill -9, and finishes all background work', async () => {
  const tenant = await createTenant(database.kysely, systemClock, { name: 'Crash' });
  const { apiKey } = await createApiKey(database.kysely, systemClock, { tenantId: tenant.tenantId });
  const scope = TenantScope.of(database, tenant.tenantId);
  await createSubscription(
    scope,
    systemClock,
    { secretBox: testSecretBox, policy: allowEverything, ports: testPorts, maxSubscriptions: 1 },
    {
      url: receiver.url,
      events: [
        'page.version.created',
        'page.version.processed',
        'page.version.published',
        'form.submitted',
        'form.enriched',
        'form.enrichment_failed',
      ],
      active: true,
    },
  );
  const audiences: Awaited<ReturnType<typeof makeAudience>>[] = [];
  // Enough audiences that versions are generated, not only superseded by the next one queued.
  for (let i = 0; i < 12; i++) audiences.push(await makeAudience(scope, systemClock));
  // A page with a form, served on its own host; half of the visitors give a free-mail address.
  const formPageId = await makePage(scope, systemClock, {
    status: 'published',
    actions: [{ purpose: 'Talk to us', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
    headerActionIndex: 0,
  });
  form.audienceId = (await makeAudience(scope, systemClock, { pageId: formPageId })).audienceId;
  const domain = await createTenantDomain(scope, systemClock, { hostname: FORM_HOST }, { serviceHostnames: [] });
  await createPageLink(scope, systemClock, {
    path: '/contact',
    tenantDomainId: domain.tenantDomainId,
    target: { targetType: 'audience', audienceId: form.audienceId },
  });

  let next = 0;
  const makeOp = (): Op => {
    const n = next++;
    const pick = Math.random();
    if (pick < 0.15)
      return { kind: 'form', token: `form-${n}`, email: `visitor${n}@${n % 2 ? 'gmail.com' : `lead${n}.example.com`}` };
    if (pick < 0.6) {
      return {
        kind: 'log',
        key: `crash-${n}`,
        body: { email: `person${n % EMAILS}@crash.example.com`, source: 'crash-test', payload: { n } },
      };
    }
    if (pick < 0.85) return { kind: 'account', domain: `crash${n % DOMAINS}.example.com` };
    const audience = audiences[n % audiences.length]!;
    return { kind: 'version', ...audience };
  };

  const outcomes: Outcome[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    server = await startServerProcess(serverEnv());
    const baseUrl = server.baseUrl;
    if (form.actionId === '') {
      const page = await pageRequest(baseUrl, 'GET');
      form.actionId = /name="ap_action" value="([^"]+)"/.exec(page?.text ?? '')?.[1] ?? '';
      expect(form.actionId, 'the form page serves its form').not.toBe('');
    }
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (running) {
        const op = makeOp();
        outcomes.push({ op, id: await send(baseUrl, apiKey, op) });
      }
    });
    // A random moment: sometimes right after start, sometimes well into the load. Most rounds wait
    // for the generation worker's first provider call first (its thread takes a while to start
    // under load), so the kill can land while a call is in flight.
    const callsBefore = provider.requests.length;
    const started = Date.now();
    if (round % 4 !== 0) {
      while (provider.requests.length === callsBefore && Date.now() - started < 8_000) {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 1_500));
    await server.stop('SIGKILL');
    running = false;
    await Promise.all(clients);
  }

  // A version the killed process was generating stays `processing` until its 60 s lease ends; to
  // keep the test short, let that minute pass at once (what a takeover does is unchanged).
  await scope
    .updateTable('audience_versions')
    .set({ available_at: new Date(Date.now() - 1_000).toISOString() })
    .where('audience_versions.status', '=', 'processing')
    .execute();
  // The same for an enrichment job a killed process had claimed (its lease is 30 s).
  await scope
    .updateTable('enrichment_jobs')
    .set({ available_at: new Date(Date.now() - 1_000).toISOString() })
    .where('enrichment_jobs.status', '=', 'processing')
    .execute();

  // The last life: nobody kills it.
  server = await startServerProcess(serverEnv());
  const { baseUrl } = server;
  const acknowledged = outcomes.filter((o) => o.id !== null);
  const unknown = outcomes.filter((o) => o.id === null);
  expect(acknowledged.length).toBeGreaterThan(0);

  // A write whose answer was lost, sent again with its key (accounts: their domain), gives one id,
  // the same on every retry; an acknowledged one gives the id it was acknowledged with.
  for (const { op, id } of outcomes) {
    if (op.kind === 'version') continue;
    const first = await send(baseUrl, apiKey, op);
    const second = await send(baseUrl, apiKey, op);
    expect(first).not.toBeNull();
    expect(second).toBe(first);
    if (id !== null && (op.kind === 'log' || op.kind === 'form')) expect(first).toBe(id);
  }

  // Every submission (acknowledged or not, once retried) ends in exactly one enrichment event:
  // form.enriched for a company address, form.enrichment_failed (free_mail_domain) for gmail.
  const submissions = await scope
    .selectFrom('form_submissions')
    .select(['form_submissions.id', 'form_submissions.email'])
    .execute();
  const formTokens = new Set(outcomes.filter((o) => o.op.kind === 'form').map((o) => (o.op as FormOp).token));
  expect(submissions.length).toBe(formTokens.size);
  for (const { op, id } of acknowledged) {
    if (op.kind === 'form')
      expect(
        submissions.some((row) => row.id === id),
        `submission ${id}`,
      ).toBe(true);
  }
  const enrichmentDeadline = Date.now() + 60_000;
  const enrichmentEvents = () =>
    scope
      .selectFrom('events')
      .select(['events.type', 'events.data'])
      .where('events.type', 'in', ['form.enriched', 'form.enrichment_failed'])
      .execute();
  while ((await enrichmentEvents()).length < submissions.length && Date.now() < enrichmentDeadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const perSubmission = new Map<string, string[]>();
  for (const e of await enrichmentEvents()) {
    const submissionId = (e.data as { formSubmissionId: string }).formSubmissionId;
    perSubmission.set(submissionId, [...(perSubmission.get(submissionId) ?? []), e.type]);
  }
  for (const row of submissions) {
    const expected = row.email.endsWith('@gmail.com') ? 'form.enrichment_failed' : 'form.enriched';
    expect(perSubmission.get(row.id), `enrichment of ${row.id}`).toEqual([expected]);
  }

  // No acknowledged write is lost.
  // The clients' own entries (form submissions write person logs of their own, source page-form).
  const logIds = new Set(
    (
      await scope
        .selectFrom('person_logs')
        .select('person_logs.id')
        .where('person_logs.source', '=', 'crash-test')
        .execute()
    ).map((r) => r.id),
  );
  const accountIds = new Set((await scope.selectFrom('accounts').select('accounts.id').execute()).map((r) => r.id));
  for (const { op, id } of acknowledged) {
    if (op.kind === 'log') expect(logIds.has(id!), `person log ${id}`).toBe(true);
    if (op.kind === 'account') expect(accountIds.has(id!), `account ${id}`).toBe(true);
  }
  // Each log key wrote exactly one entry: as many entries as distinct keys.
  const logKeys = new Set(outcomes.filter((o) => o.op.kind === 'log').map((o) => (o.op as LogOp).key));
  expect(logIds.size).toBe(logKeys.size);

  // No email with two persons.
  const persons = await scope.selectFrom('persons').select(['persons.id', 'persons.email']).execute();
  const byEmail = new Map<string, number>();
  for (const p of persons) if (p.email !== null) byEmail.set(p.email, (byEmail.get(p.email) ?? 0) + 1);
  expect([...byEmail.entries()].filter(([, count]) => count > 1)).toEqual([]);

  // Every queued version ends generated exactly once.
  const deadline = Date.now() + 60_000;
  const runnable = async () =>
    Number(
      (
        await scope
          .selectFrom('audience_versions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('audience_versions.status', 'in', ['queued', 'pending', 'processing'])
          .executeTakeFirstOrThrow()
      ).n,
    );
  while ((await runnable()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(await runnable()).toBe(0);
  const processed = await scope
    .selectFrom('events')
    .select('events.data')
    .where('events.type', '=', 'page.version.processed')
    .execute();
  const perVersion = new Map<string, number>();
  for (const e of processed) {
    const versionId = (e.data as { versionId: string }).versionId;
    perVersion.set(versionId, (perVersion.get(versionId) ?? 0) + 1);
  }
  const versions = await scope
    .selectFrom('audience_versions')
    .select(['audience_versions.id', 'audience_versions.status'])
    .execute();
  for (const v of versions) {
    // Superseded versions may be cancelled before they are generated; none is generated twice.
    if (v.status !== 'cancelled') expect(perVersion.get(v.id), `version ${v.id} (${v.status})`).toBe(1);
    else expect(perVersion.get(v.id) ?? 0).toBeLessThanOrEqual(1);
  }
  // Written by the model through the provider: one stored artifact each, at least one call each
  // (a call whose process died is made again: more calls than versions is expected, fewer is not).
  const createdByClients = acknowledged.filter((o) => o.op.kind === 'version').map((o) => o.id!);
  const generated = (
    await scope
      .selectFrom('audience_versions')
      .select(['audience_versions.id', 'audience_versions.generator'])
      .where('audience_versions.status', '!=', 'cancelled')
      .execute()
  ).filter((v) => createdByClients.includes(v.id));
  expect(generated.length).toBeGreaterThan(0);
  for (const v of generated) expect(v.generator, `generator of ${v.id}`).toBe('model-writer-v1');
  expect(provider.requests.length).toBeGreaterThanOrEqual(generated.length);
  expect(provider.requests.every((r) => r.body.model === 'crash-model')).toBe(true);

  // Every event is delivered at least once.
  const eventIds = (await scope.selectFrom('events').select('events.id').execute()).map((e) => e.id);
  const arrived = () => new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])));
  while (eventIds.some((id) => !arrived().has(id)) && Date.now() < deadline + 30_000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(eventIds.filter((id) => !arrived().has(id))).toEqual([]);

  expect(await server.stop()).toBe(0);
  server = null;
  console.log(
    `${ENGINE}: ${ROUNDS} kills, ${outcomes.length} writes (${unknown.length} unanswered), ` +
      `${versions.length} versions (${provider.requests.length} provider calls, ${provider.abandoned} cut off by a kill), ${submissions.length} form submissions, ${eventIds.length} events, ` +
      `${receiver.requests.length} deliveries`,
  );
}, 240_000);
