import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantScope } from '../../src/db/tenant-scope.js';
import { systemClock } from '../../src/lib/clock.js';
import { SessionIngest } from '../../src/modules/audience-sessions/index.js';
import { createApiKey, createTenant } from '../../src/modules/tenants/tenants.service.js';
import { makeAudience } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { linkOnHost, visit } from '../factories/site.js';
import { createTestDatabase, ENGINE, startTestApp, type Tenant, type TestApp, type TestDatabase } from '../harness.js';
import { startServerProcess } from '../process.js';

/** GET /metrics (issue 27, item 4): Prometheus text behind a bearer token, never on tenant hosts. */

const TOKEN = 'metrics-token-0123456789';
const HOST = 'metrics.localhost';

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('GET /metrics without METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('is off: 404, whatever is sent', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer ' } });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('# HELP');
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  let alice: Tenant;
  const scrape = (authorization = `Bearer ${TOKEN}`, host = 'localhost') =>
    t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization, host } });

  beforeAll(async () => {
    t = await startTestApp({ config: { METRICS_TOKEN: TOKEN } });
    alice = await t.createTenant('Alice');
  });
  afterAll(() => t.close());

  it('refuses a scrape without the token, or with another one (401, a Bearer challenge)', async () => {
    for (const authorization of ['', 'Bearer wrong-token-0123456789', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await scrape(authorization);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.body).not.toContain('# HELP');
    }
  });

  it('answers the Prometheus text format: request latencies by operationId, process and event-loop metrics', async () => {
    expect((await t.request(alice, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(200);
    expect((await t.request(alice, { method: 'GET', url: '/v0/persons/per_nope' })).statusCode).toBe(404);
    const res = await scrape();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(sample(res.body, 'ap_http_request_duration_seconds_count{route="pages.list",status="2xx"}')).toBe(1);
    expect(res.body).toMatch(/ap_http_request_duration_seconds_count\{route="[^"]+",status="4xx"\} 1/);
    expect(res.body).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(res.body).toContain('# TYPE nodejs_eventloop_lag_p99_seconds gauge');
    expect(res.body).toContain('# TYPE ap_jobs gauge');
  });

  it('counts page-cache hits and misses, and ingest flushes', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'published', title: 'Metrics' });
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Acme' });
    await linkOnHost(t, alice, { hostname: HOST, path: '/metrics-page', audienceId });
    const before = await scrape();
    const hits = sample(before.body, 'ap_page_cache_requests_total{result="hit"}') ?? 0;
    const misses = sample(before.body, 'ap_page_cache_requests_total{result="miss"}') ?? 0;
    for (let i = 0; i < 3; i++) expect((await visit(t, HOST, '/metrics-page')).statusCode).toBe(200);
    await SessionIngest.flushAll();
    const after = (await scrape()).body;
    expect(sample(after, 'ap_page_cache_requests_total{result="miss"}')).toBe(misses + 1);
    expect(sample(after, 'ap_page_cache_requests_total{result="hit"}')).toBe(hits + 2);
    expect(sample(after, 'ap_page_cache_bytes')).toBeGreaterThan(0);
    expect(sample(after, 'ap_page_cache_pages')).toBeGreaterThanOrEqual(1);
  });

  it('is not served on a tenant domain, token or not', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'published' });
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId });
    await linkOnHost(t, alice, { hostname: 'tenant-metrics.localhost', path: '/x', audienceId });
    const res = await scrape(`Bearer ${TOKEN}`, 'tenant-metrics.localhost');
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('# HELP');
  });
});

describe('GET /metrics of the service process: the background workers are counted too', () => {
  let db: TestDatabase;
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.stop();
    await db?.cleanup();
  });

  it('reports the jobs its workers ran (on SQLite, from the workers thread) and their queues', async () => {
    const { tenantId } = await createTenant(db.kysely, systemClock, { name: 'Scraped' });
    const { apiKey } = await createApiKey(db.kysely, systemClock, { tenantId });
    const scope = TenantScope.of(db, tenantId);
    const { pageId, audienceId } = await makeAudience(scope, systemClock);
    server = await startServerProcess({ ...db.env, METRICS_TOKEN: TOKEN });
    const scrape = async () =>
      (await fetch(`${server!.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const res = await fetch(`${server.baseUrl}/v0/pages/${pageId}/audiences/${audienceId}/versions`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    const line = 'ap_job_runs_total{kind="audience-version-generation",outcome="completed"}';
    const deadline = Date.now() + 20_000;
    let text = await scrape();
    while ((sample(text, line) ?? 0) < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      text = await scrape();
    }
    expect(sample(text, line)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'ap_jobs{kind="audience-version-generation",state="waiting"}')).toBe(0);
    expect(text).toContain('ap_jobs_oldest_due_seconds{kind="form-enrichment"} 0');
    if (ENGINE === 'sqlite') expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  }, 60_000);
});
