import { processTreeRss, runLoad } from '../load.js';
import { CONNECTIONS, type BenchScenario } from '../lib.js';
import { seedPages } from './pages.js';

/**
 * Memory soak (issue 13): GET /v0/pages?limit=1 at about half of the rate the service reaches at
 * full load, for BENCH_SOAK_SECONDS (default 300), with the service's RSS sampled every 10 s.
 * After a minute of warm-up it should stay flat (within 10 %). Run it alone: BENCH_ONLY=soak.
 */
export const soakScenario: BenchScenario = {
  name: 'soak',
  async run(ctx) {
    const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? (ctx.quick ? 30 : 300));
    const tenant = await ctx.createTenant('bench soak');
    await seedPages(tenant.scope, ctx.clock, 1_000);
    const spec = {
      baseUrl: ctx.service.baseUrl,
      headers: { 'x-api-key': tenant.apiKey },
      requests: [{ method: 'GET', path: '/v0/pages?limit=1' }],
      connections: CONNECTIONS,
    };
    const full = await runLoad({ ...spec, durationSeconds: 5 });
    const target = full.requestsPerSecond / 2;
    const connections = 10;
    const delayMs = (connections * 1000) / target;
    const samples: { atSeconds: number; rssMiB: number }[] = [];
    const started = Date.now();
    const sample = () =>
      samples.push({
        atSeconds: Math.round((Date.now() - started) / 1000),
        rssMiB: Math.round((processTreeRss(ctx.service.pid) / 2 ** 20) * 10) / 10,
      });
    sample();
    const timer = setInterval(sample, 10_000);
    const load = await runLoad({ ...spec, connections, durationSeconds: seconds, delayMs });
    clearInterval(timer);
    sample();
    const warm = samples.filter((s) => s.atSeconds >= 60);
    const base = warm[0]?.rssMiB ?? samples[0]!.rssMiB;
    const max = Math.max(...warm.map((s) => s.rssMiB));
    const min = Math.min(...warm.map((s) => s.rssMiB));
    const spread = Math.round(((max - min) / base) * 1000) / 10;
    console.log(`  RSS every 10 s (MiB): ${samples.map((s) => s.rssMiB).join(' ')}`);
    console.log(
      `  after 60 s: ${min}–${max} MiB, spread ${spread}% of ${base} MiB (goal ≤ 10%: ${spread <= 10 ? 'met' : 'MISSED'})`,
    );
    ctx.record({
      scenario: 'soak',
      name: `soak: GET /v0/pages?limit=1 at ~${Math.round(target)} req/s for ${seconds} s`,
      requestsPerSecond: load.requestsPerSecond,
      p50Ms: load.p50Ms,
      p99Ms: load.p99Ms,
      responseBytes: 0,
      non2xx: load.non2xx,
      errors: load.errors,
      ratioToCeiling: null,
      extra: { fullLoadRequestsPerSecond: full.requestsPerSecond, rssSpreadPercentAfterWarmup: spread, samples },
    });
  },
};
