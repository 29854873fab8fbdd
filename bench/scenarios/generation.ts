import { systemClock } from '../../src/lib/clock.js';
import { seedAudience } from '../../src/modules/audiences/audiences.service.js';
import { createVersion } from '../../src/modules/audiences/audiences.versions.js';
import { createPageLink } from '../../src/modules/page-links/page-links.service.js';
import { createTenantDomain } from '../../src/modules/tenant-domains/tenant-domains.service.js';
import { FakeOpenAI } from '../../test/fakes/openai-server.js';
import {
  benchPage,
  benchTenant,
  CONNECTIONS,
  measured,
  startService,
  type BenchContext,
  type BenchScenario,
} from '../lib.js';
import { processTreeCpuMicros, runLoad, type LoadResult } from '../load.js';

/**
 * Generation through a model (issue 24): the fake OpenAI-compatible provider answers every call
 * after a fixed second; 1,000 queued versions across 10 tenants are written by a workers process
 * (the API process runs none) with LLM_CONCURRENCY calls in flight. Reported: the total time
 * against the concurrency bound (1,000 / LLM_CONCURRENCY seconds; goal within 10 %), the workers
 * process's own CPU per version, and the p99 of serving a page by Host while it runs against the
 * same when idle (goal within 3×).
 */
const TENANTS = 10;
const VERSIONS_PER_TENANT = 100;
const CALL_MS = 1_000;
const HOST = 'generation.bench.localhost';
const COPY = {
  hero: { eyebrow: 'For you', headline: 'A plan for your team', subheadline: 'Written from the brief.' },
  sections: [{ kind: 'text', heading: 'Why now', body: 'Teams like yours start with **one page** per account.' }],
  actions: [],
  seo: { title: 'A plan for your team', description: 'Written from the brief.' },
};

async function run(ctx: BenchContext) {
  const concurrency = Number(process.env.BENCH_LLM_CONCURRENCY ?? 50);
  const total = TENANTS * VERSIONS_PER_TENANT;
  const { database, env, drop } = await ctx.freshDatabase('generation');
  const fake = await FakeOpenAI.start();
  fake.otherwise = { content: COPY, delayMs: CALL_MS };
  let servedPath = '';
  for (let t = 0; t < TENANTS; t++) {
    const tenant = await benchTenant(database, `bench generation ${t}`);
    const pageId = await benchPage(tenant.scope, `Generation page ${t}`);
    const audiences: string[] = [];
    for (let a = 0; a < VERSIONS_PER_TENANT; a++) {
      const { audienceId } = await seedAudience(tenant.scope, systemClock, {
        pageId,
        computedName: `Company ${t}-${a} · VP Sales`,
        personRouteKey: `person-${t}-${a}`,
      });
      audiences.push(audienceId);
    }
    if (t === 0) {
      const domain = await createTenantDomain(tenant.scope, systemClock, { hostname: HOST }, { serviceHostnames: [] });
      await createPageLink(tenant.scope, systemClock, {
        path: '/offer',
        tenantDomainId: domain.tenantDomainId,
        target: { targetType: 'audience', audienceId: audiences[0]! },
      });
      servedPath = '/offer';
    }
    // The backlog: a queued version for every audience.
    for (const audienceId of audiences) await createVersion(tenant.scope, systemClock, pageId, audienceId, {});
  }
  const runnable = async () =>
    Number(
      (
        await database.kysely
          .selectFrom('audience_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', 'in', ['queued', 'pending', 'processing'])
          .executeTakeFirstOrThrow()
      ).n,
    );
  const serviceEnv = {
    ...env,
    LLM_BASE_URL: fake.baseUrl,
    LLM_MODEL: 'bench-model',
    LLM_CONCURRENCY: String(concurrency),
    LLM_DAILY_TOKEN_BUDGET: '0',
    LLM_TIMEOUT_MS: '30000',
  };
  const api = await startService({ ...serviceEnv, RUN_WORKERS: 'false' });
  const servePage = (): Promise<LoadResult> =>
    runLoad({
      baseUrl: api.baseUrl,
      headers: { host: HOST },
      requests: [{ method: 'GET', path: servedPath }],
      connections: CONNECTIONS,
      durationSeconds: ctx.quick ? 3 : 5,
      // paced below capacity (exponential pauses, as independent visitors): the tail a visitor sees
      delayMs: 100,
      pauses: 'exponential',
    });
  let workers: Awaited<ReturnType<typeof startService>> | null = null;
  try {
    await new Promise((r) => setTimeout(r, 1_500)); // the API learns the host name
    const idle = await servePage();
    workers = await startService({ ...serviceEnv, RUN_WORKERS: 'true', WORKERS_THREAD: 'false' });
    const cpuAtStart = processTreeCpuMicros(workers.pid);
    // The clock starts at the first provider call.
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    const started = performance.now();
    const busy = await servePage();
    const backlogAfterLoad = await runnable();
    while ((await runnable()) > 0) {
      if (performance.now() - started > 30 * 60_000) throw new Error('generation did not finish in 30 minutes');
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuMicros = processTreeCpuMicros(workers.pid) - cpuAtStart;
    const bound = total / concurrency;
    const ready = Number(
      (
        await database.kysely
          .selectFrom('audience_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('generator', '=', 'model-writer-v1')
          .executeTakeFirstOrThrow()
      ).n,
    );
    ctx.record({
      scenario: 'generation',
      name: `${total} versions, fake provider ${CALL_MS} ms, LLM_CONCURRENCY=${concurrency}`,
      requestsPerSecond: Math.round((total / seconds) * 10) / 10,
      p50Ms: 0,
      p99Ms: 0,
      responseBytes: 0,
      non2xx: 0,
      errors: 0,
      ratioToCeiling: null,
      extra: {
        totalSeconds: Math.round(seconds * 10) / 10,
        boundSeconds: bound,
        overBound: `${Math.round((seconds / bound - 1) * 1000) / 10} % (goal ≤ 10 %)`,
        providerCalls: fake.requests.length,
        maxCallsInFlight: fake.maxInFlight,
        // below LLM_CONCURRENCY: slots held by the worker's own work (reading inputs, storing and publishing)
        averageCallsInFlight: Math.round(((fake.requests.length * CALL_MS) / 1000 / seconds) * 10) / 10,
        versionsByModel: ready,
        workerCpuMsPerVersion: Math.round(cpuMicros / total / 10) / 100,
        // near 1 (or the machine's free share of a core): the worker was CPU-bound, not waiting on the provider
        workerCpuSecondsPerWallSecond: Math.round((cpuMicros / 1e6 / seconds) * 100) / 100,
      },
    });
    for (const [phase, result, extra] of [
      ['idle', idle, {}],
      ['during generation', busy, { p99OverIdle: Math.round((busy.p99Ms / idle.p99Ms) * 100) / 100, backlogAfterLoad }],
    ] as const) {
      ctx.record(
        measured('generation', `GET page by Host, ${phase} (paced)`, result, {
          ...extra,
          goal: phase === 'idle' ? undefined : 'p99 ≤ 3× idle',
        }),
      );
    }
  } finally {
    await workers?.stop();
    await api.stop();
    await fake.close();
    await drop();
  }
}

export const generationScenario: BenchScenario = { name: 'generation', run };
