import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { createPage } from '../../src/modules/pages/pages.service.js';
import { PAGE_TYPES } from '../../src/modules/pages/pages.schemas.js';
import { BENCH_PG_URL, startReference, type BenchScenario } from '../lib.js';
import { companyNames } from '../words.js';

const COMPANIES = companyNames(2_000);
const THEMES = ['Pricing', 'Onboarding', 'Renewal', 'Webinar', 'Security review', 'Expansion', 'Launch', 'Follow-up'];

export async function seedPages(scope: TenantScope, clock: Clock, count: number): Promise<string[]> {
  const ids: string[] = [];
  await scope.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      ids.push(
        await createPage(tx, clock, {
          name: `${THEMES[i % THEMES.length]} for ${COMPANIES[i % COMPANIES.length]} #${i}`,
          title: `Hello ${COMPANIES[i % COMPANIES.length]}`,
          pageContext: 'Personalised page for the account team. '.repeat(4),
          pageType: PAGE_TYPES[i % PAGE_TYPES.length]!,
          status: i % 10 === 0 ? 'archived' : i % 3 === 0 ? 'draft' : 'published',
          brandId: 'brand_bench',
          actions: [
            { purpose: 'Book a meeting', buttonTitle: 'Book', actionType: 'calendar', url: 'https://example.com/book' },
            {
              purpose: 'Read the case study',
              buttonTitle: 'Read',
              actionType: 'link',
              url: 'https://example.com/case',
            },
          ],
          headerActionIndex: 0,
          metadata: { title: 'Bench page', description: 'A page for the benchmark', keywords: ['bench'] },
        }),
      );
    }
  });
  return ids;
}

/** Pages: 10,000+ pages across tenants; one tenant of 1,000 pages and one of 100,000 for search. */
export const pagesScenario: BenchScenario = {
  name: 'pages',
  async run(ctx) {
    const small = await ctx.createTenant('bench pages 1k');
    const large = await ctx.createTenant('bench pages 100k');
    const smallIds = await seedPages(small.scope, ctx.clock, 1_000);
    for (let t = 0; t < 9; t++)
      await seedPages((await ctx.createTenant(`bench pages other ${t}`)).scope, ctx.clock, 1_000);
    await seedPages(large.scope, ctx.clock, ctx.quick ? 10_000 : 100_000);

    await ctx.load({ name: 'GET /v0/pages?limit=1', path: '/v0/pages?limit=1', apiKey: small.apiKey });
    await ctx.load({ name: 'GET /v0/pages?limit=20', path: '/v0/pages?limit=20', apiKey: small.apiKey });
    // The same lists from the stack alone (bench/reference.mjs): Fastify, the driver, the same
    // response schema and rows of the same size, nothing of the service around them.
    const reference = await startReference(
      ctx.engine,
      ctx.engine === 'sqlite' ? `${ctx.dataDir}/reference.sqlite` : BENCH_PG_URL,
    );
    try {
      for (const limit of [1, 20]) {
        await ctx.load({
          name: `GET /v0/pages?limit=${limit}, reference: bare Fastify + ${limit === 1 ? 'one row' : `${limit} rows`}`,
          path: `/v0/pages?limit=${limit}`,
          apiKey: reference.key,
          target: reference,
        });
      }
    } finally {
      await reference.stop();
    }
    const searches = COMPANIES.slice(0, 50).map((c) => `/v0/pages/search?query=${encodeURIComponent(c)}`);
    await ctx.load({ name: 'GET /v0/pages/search (1,000 pages)', path: '', paths: searches, apiKey: small.apiKey });
    await ctx.load({
      name: `GET /v0/pages/search (${ctx.quick ? '10,000' : '100,000'} pages)`,
      path: '',
      paths: searches,
      apiKey: large.apiKey,
    });
    const editable = smallIds.filter((_, i) => i % 10 !== 0);
    await ctx.load({
      name: 'PATCH /v0/pages/{id}',
      method: 'PATCH',
      path: '',
      paths: editable.map((id) => `/v0/pages/${id}`),
      body: (i: number) => ({ name: `Renamed ${i}`, metadata: { description: `Edit ${i}` } }),
      apiKey: small.apiKey,
    });
  },
};
