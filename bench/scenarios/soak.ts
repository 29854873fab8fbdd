import { processTreeRss, runLoad } from '../load.js';
import { CONNECTIONS, type BenchScenario } from '../lib.js';
import { seedPages } from './pages.js';

/**
 * Memory soak (issue 13): GET /v0/pages?limit=1 at about half of the rate the service reaches at
 * full load, with the service's RSS sampled every 10 s: BENCH_SOAK_WARMUP_SECONDS (default 120)
 * of warm-up, then BENCH_SOAK_SECONDS (default 300) measured, over which RSS should stay flat
 * (within 10 %). The warm-up is two minutes because V8 keeps the heap that the full-load probe
 * grew for about 100 s before it gives it back (docs/performance.md, Memory): a one-minute
 * warm-up measured that return, not growth. The slope of a least-squares line through the
 * measured samples is printed beside the spread: a leak shows as a steady slope, a GC as a
 * spike. Run it alone: BENCH_ONLY=soak.
 */
export const soakScenario: BenchScenario = {
  name: 'soak',
  async run(ctx) {
    const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? (ctx.quick ? 30 : 300));
    const warmupSeconds = Number(process.env.BENCH_SOAK_WARMUP_SECONDS ?? (ctx.quick ? 10 : 120));
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
    const load = await runLoad({ ...spec, connections, durationSeconds: warmupSeconds + seconds, delayMs });
    clearInterval(timer);
    sample();
    const warm = samples.filter((s) => s.atSeconds >= warmupSeconds);
    const base = warm[0]?.rssMiB ?? samples[0]!.rssMiB;
    const max = Math.max(...warm.map((s) => s.rssMiB));
    const min = Math.min(...warm.map((s) => s.rssMiB));
    const spread = Math.round(((max - min) / base) * 1000) / 10;
    const slopeMiBPerMinute = Math.round(slope(warm) * 60 * 100) / 100;
    console.log(`  RSS every 10 s (MiB): ${samples.map((s) => s.rssMiB).join(' ')}`);
    console.log(
      `  after ${warmupSeconds} s: ${min}–${max} MiB, spread ${spread}% of ${base} MiB (goal ≤ 10%: ${spread <= 10 ? 'met' : 'MISSED'}), trend ${slopeMiBPerMinute} MiB/min`,
    );
    ctx.record({
      scenario: 'soak',
      name: `soak: GET /v0/pages?limit=1 at ~${Math.round(target)} req/s, ${warmupSeconds} s warm-up + ${seconds} s`,
      requestsPerSecond: load.requestsPerSecond,
      p50Ms: load.p50Ms,
      p99Ms: load.p99Ms,
      responseBytes: 0,
      non2xx: load.non2xx,
      errors: load.errors,
      ratioToCeiling: null,
      extra: {
        fullLoadRequestsPerSecond: full.requestsPerSecond,
        warmupSeconds,
        rssSpreadPercentAfterWarmup: spread,
        rssTrendMiBPerMinute: slopeMiBPerMinute,
        samples,
      },
    });
  },
};

/** MiB per second of the least-squares line through the samples. */
function slope(samples: { atSeconds: number; rssMiB: number }[]): number {
  if (samples.length < 2) return 0;
  const meanT = samples.reduce((sum, s) => sum + s.atSeconds, 0) / samples.length;
  const meanM = samples.reduce((sum, s) => sum + s.rssMiB, 0) / samples.length;
  let covariance = 0;
  let variance = 0;
  for (const s of samples) {
    covariance += (s.atSeconds - meanT) * (s.rssMiB - meanM);
    variance += (s.atSeconds - meanT) ** 2;
  }
  return variance === 0 ? 0 : covariance / variance;
}
