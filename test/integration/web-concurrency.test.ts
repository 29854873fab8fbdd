import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantScope } from '../../src/db/tenant-scope.js';
import { systemClock } from '../../src/lib/clock.js';
import { createApiKey, createTenant } from '../../src/modules/tenants/tenants.service.js';
import { makeAudience } from '../factories/audiences.js';
import { PUBLIC_ALIAS, startReceiver, subscribe, TEST_SECRET_KEY, type Receiver } from '../factories/webhooks.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../harness.js';
import { freePort, startServerProcess } from '../process.js';

const METRICS_TOKEN = 'cluster-metrics-token-0123';

/** Processes whose parent is `pid` (Linux). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.runIf(ENGINE === 'sqlite')('WEB_CONCURRENCY on SQLite', () => {
  it('is refused with a clear message (exit 78)', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main/server.ts'], {
      env: { ...process.env, WEB_CONCURRENCY: '2', DATABASE_URL: '', DATA_DIR: fs.mkdtempSync('/tmp/aps-wc-') },
      encoding: 'utf8',
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toMatch(/WEB_CONCURRENCY=2 needs PostgreSQL/);
  }, 30_000);
});

describe.runIf(ENGINE === 'postgres')('two server processes on PostgreSQL (WEB_CONCURRENCY=2)', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let server: Awaited<ReturnType<typeof startServerProcess>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver(PUBLIC_ALIAS);
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await db?.cleanup();
  });

  it('generates every queued version exactly once and delivers every event at least once', async () => {
    const { tenantId } = await createTenant(db.kysely, systemClock, { name: 'Two processes' });
    const { apiKey } = await createApiKey(db.kysely, systemClock, { tenantId });
    const scope = TenantScope.of(db, tenantId);
    await subscribe(scope, systemClock, receiver.url, [
      'page.version.created',
      'page.version.processed',
      'page.version.published',
    ]);
    const audiences = [];
    for (let i = 0; i < 12; i++) audiences.push(await makeAudience(scope, systemClock));

    server = await startServerProcess({
      ...db.env,
      WEB_CONCURRENCY: '2',
      PORT: String(await freePort()),
      WEBHOOK_SECRET_KEY: TEST_SECRET_KEY,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOWED_PORTS: String(receiver.port),
      RATE_LIMIT_PER_SECOND: '0',
      LOG_LEVEL: 'warn',
      METRICS_TOKEN: METRICS_TOKEN,
    });
    expect(childrenOf(server.child.pid!)).toHaveLength(2);

    // Three versions per audience, sent at once: both processes take requests and generate.
    const created = await Promise.all(
      audiences.flatMap(({ pageId, audienceId }) =>
        [0, 1, 2].map(async () => {
          const res = await fetch(`${server.baseUrl}/v0/pages/${pageId}/audiences/${audienceId}/versions`, {
            method: 'POST',
            headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
            body: '{}',
          });
          expect(res.status).toBe(201);
          return ((await res.json()) as { versionId: string }).versionId;
        }),
      ),
    );

    const runnable = () =>
      scope
        .selectFrom('audience_versions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('audience_versions.status', 'in', ['queued', 'pending', 'processing'])
        .executeTakeFirstOrThrow();
    const deadline = Date.now() + 60_000;
    while (Number((await runnable()).n) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(Number((await runnable()).n)).toBe(0);

    // Exactly once: one processed event per version that was generated (superseded ones may be
    // cancelled before generation; none is processed twice).
    const processed = await scope
      .selectFrom('events')
      .select(['events.id', 'events.data'])
      .where('events.type', '=', 'page.version.processed')
      .execute();
    const perVersion = new Map<string, number>();
    for (const e of processed) {
      const versionId = (e.data as { versionId: string }).versionId;
      perVersion.set(versionId, (perVersion.get(versionId) ?? 0) + 1);
    }
    for (const [, count] of perVersion) expect(count).toBe(1);
    const versions = await scope
      .selectFrom('audience_versions')
      .select(['audience_versions.id', 'audience_versions.status', 'audience_versions.audience_id'])
      .where('audience_versions.id', 'in', created)
      .execute();
    expect(versions).toHaveLength(created.length);
    const generatedPerAudience = new Map<string, number>();
    for (const v of versions) {
      if (v.status !== 'cancelled') expect(perVersion.get(v.id)).toBe(1);
      if (perVersion.has(v.id))
        generatedPerAudience.set(v.audience_id, (generatedPerAudience.get(v.audience_id) ?? 0) + 1);
    }
    expect(generatedPerAudience.size).toBe(audiences.length);

    // At least once: every event of the tenant reaches the subscriber.
    const events = await scope.selectFrom('events').select('events.id').execute();
    const eventIds = new Set(events.map((e) => e.id));
    const arrived = () => new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])));
    while ([...eventIds].some((id) => !arrived().has(id)) && Date.now() < deadline + 30_000) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect([...eventIds].filter((id) => !arrived().has(id))).toEqual([]);
    expect(eventIds.size).toBeGreaterThanOrEqual(created.length);

    // A scrape reaches one of the processes, which answers for both: the jobs and the deliveries
    // of the two add up to the whole (each process alone ran only its share).
    const metrics = await (
      await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    const value = (line: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(`${line} `))
          ?.slice(line.length + 1) ?? 0,
      );
    const generatedByServers = created.filter((id) => perVersion.has(id)).length;
    expect(value('ap_job_runs_total{kind="audience-version-generation",outcome="completed"}')).toBe(generatedByServers);
    expect(value('ap_webhook_attempts_total{outcome="delivered"}')).toBeGreaterThanOrEqual(eventIds.size);
    expect(value('ap_http_request_duration_seconds_count{route="audiences.versions.create",status="2xx"}')).toBe(
      created.length,
    );
  }, 120_000);
});
