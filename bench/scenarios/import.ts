import fs from 'node:fs';
import path from 'node:path';
import { importAudiencesCsv } from '../../src/modules/audiences/audiences.import.js';
import { seedAudience } from '../../src/modules/audiences/audiences.service.js';
import { createPageLink } from '../../src/modules/page-links/page-links.service.js';
import { createPage } from '../../src/modules/pages/pages.service.js';
import { createTenantDomain } from '../../src/modules/tenant-domains/tenant-domains.service.js';
import { median, type BenchScenario } from '../lib.js';

const HOST = 'import.bench.localhost';
/** Visitors, not a saturating load: the question is whether a request waits behind the import. */
const VISITORS = 8;
/** Seconds per latency sample while the import runs. */
const SAMPLE_SECONDS = 3;

/**
 * Issue 23: a 10,000-row CSV imported into a page (the CLI's code, `importAudiencesCsv`, in this
 * process, as the CLI is a process of its own beside the service), timed; and the p99 of a
 * published page served by the service while it runs, against the same load's idle p99. The
 * import also queues a generation per row, which the service's worker runs meanwhile: that is
 * part of what an import costs the visitors, so it is measured with it.
 */
export const importScenario: BenchScenario = {
  name: 'import',
  async run(ctx) {
    const rows = ctx.engine === 'sqlite' ? (ctx.quick ? 2_000 : 10_000) : ctx.quick ? 500 : 2_000;
    const { scope } = await ctx.createTenant('Bench import');
    const page = (status: 'published' | 'draft', name: string) =>
      createPage(scope, ctx.clock, {
        name,
        title: 'A plan for {{company}}',
        pageContext: 'Outbound to VP Sales.',
        pageType: 'outbound',
        status,
        brandId: 'brand_bench',
        actions: [{ purpose: 'Book', buttonTitle: 'Book', actionType: 'calendar', url: 'https://example.com/book' }],
        headerActionIndex: 0,
        metadata: { title: 'A plan for your team', description: 'Pricing and a rollout plan.' },
      });
    // The page visitors read, and the page the list is imported into.
    const servedPage = await page('published', 'Served page');
    const targetPage = await page('published', 'Imported page');
    const { audienceId } = await seedAudience(scope, ctx.clock, {
      pageId: servedPage,
      computedName: 'Acme · VP Sales',
      personRouteKey: 'acme',
    });
    const domain = await createTenantDomain(scope, ctx.clock, { hostname: HOST }, { serviceHostnames: [] });
    await createPageLink(scope, ctx.clock, {
      path: '/offers/acme',
      tenantDomainId: domain.tenantDomainId,
      target: { targetType: 'audience', audienceId },
    });
    await new Promise((r) => setTimeout(r, 1_500)); // the service learns new host names within a second

    const file = path.join(ctx.dataDir, 'targets.csv');
    const lines = ['email,name,company,domain,context'];
    for (let i = 0; i < rows; i++) {
      const company = i % 400;
      lines.push(
        `lead${i}@company${company}.example,Lead ${i},Company ${company},company${company}.example,"Row ${i}: rollout, pricing"`,
      );
    }
    fs.writeFileSync(file, lines.join('\r\n'));

    const visit = (name: string) =>
      ctx.load({
        name,
        path: '/offers/acme',
        headers: { host: HOST },
        connections: VISITORS,
        durationSeconds: SAMPLE_SECONDS,
        rounds: 1,
        noCeiling: true,
      });
    const idle = await visit(`GET page by Host, idle (${VISITORS} connections)`);

    const started = performance.now();
    let summary: Awaited<ReturnType<typeof importAudiencesCsv>> | undefined;
    let failure: unknown;
    const running = importAudiencesCsv(scope, ctx.clock, targetPage, file).then(
      (s) => (summary = s),
      (error: unknown) => (failure = error),
    );
    const during: number[] = [];
    let sample = 0;
    while (summary === undefined && failure === undefined) {
      const m = await visit(`GET page by Host, during the import #${++sample}`);
      // A sample cut short by the import's end still counts: it ran mostly during the import.
      during.push(m.p99Ms);
    }
    await running;
    if (failure !== undefined) throw failure;
    const seconds = (performance.now() - started) / 1000;
    if (summary!.created !== rows || summary!.failed !== 0) {
      throw new Error(`import: ${JSON.stringify({ ...summary, errors: summary!.errors.slice(0, 3) })}`);
    }

    const rerunStarted = performance.now();
    const rerun = await importAudiencesCsv(scope, ctx.clock, targetPage, file);
    const rerunSeconds = (performance.now() - rerunStarted) / 1000;
    if (rerun.created !== 0 || rerun.existing !== rows) throw new Error(`re-run: ${JSON.stringify(rerun)}`);

    const duringP99 = median(during);
    const worstP99 = Math.max(...during);
    console.log(
      `  imported ${rows} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds)} rows/s); re-run (all existing) ` +
        `${rerunSeconds.toFixed(1)} s; page p99 idle ${idle.p99Ms} ms, during: median ${duringP99} ms, worst ` +
        `${worstP99} ms (${(duringP99 / Math.max(idle.p99Ms, 0.001)).toFixed(2)}× idle) over ${during.length} samples`,
    );
    ctx.record({
      scenario: 'import',
      name: `import ${rows} CSV rows (rows/s; p99 = page p99 during it)`,
      requestsPerSecond: Math.round(rows / seconds),
      p50Ms: 0,
      p99Ms: duringP99,
      responseBytes: 0,
      non2xx: 0,
      errors: 0,
      ratioToCeiling: null,
      extra: {
        rows,
        importSeconds: Math.round(seconds * 10) / 10,
        rerunSeconds: Math.round(rerunSeconds * 10) / 10,
        idleP99Ms: idle.p99Ms,
        duringP99Ms: during,
        duringP99MedianMs: duringP99,
        duringP99WorstMs: worstP99,
        p99RatioToIdle: Math.round((duringP99 / Math.max(idle.p99Ms, 0.001)) * 100) / 100,
        visitors: VISITORS,
      },
    });
  },
};
