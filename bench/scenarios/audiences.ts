import { seededRandom } from '../../src/lib/random.js';
import { sql } from 'kysely';
import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { insertSessions } from '../../src/modules/audience-sessions/audience-sessions.queries.js';
import { makeSession, type SessionRow } from '../../src/modules/audience-sessions/audience-sessions.demo.js';
import { seedAudience } from '../../src/modules/audiences/audiences.service.js';
import { createPage } from '../../src/modules/pages/pages.service.js';
import type { BenchScenario } from '../lib.js';

const DAY = 86_400_000;
const PAGES = 20;
const AUDIENCES_PER_PAGE = 5;
const CHUNK = 500;
/** Short write transactions, so the service's generation worker is not locked out for long. */
const ROWS_PER_TRANSACTION = 10_000;

interface Seeded {
  pageIds: string[];
  audiences: { pageId: string; audienceId: string }[];
}

async function seedPagesAndAudiences(scope: TenantScope, clock: Clock): Promise<Seeded> {
  const pageIds: string[] = [];
  const audiences: Seeded['audiences'] = [];
  for (let p = 0; p < PAGES; p++) {
    const pageId = await createPage(scope, clock, {
      name: `Bench page ${p}`,
      title: 'Hello {{company}}',
      pageContext: 'Bench page for audiences and sessions.',
      pageType: 'outbound',
      status: p % 2 === 0 ? 'published' : 'draft',
      brandId: 'brand_bench',
      actions: [{ purpose: 'Book', buttonTitle: 'Book', actionType: 'calendar', url: 'https://example.com/book' }],
      headerActionIndex: 0,
      metadata: { title: `Bench page ${p}`, description: 'A page for the benchmark' },
    });
    pageIds.push(pageId);
    for (let a = 0; a < AUDIENCES_PER_PAGE; a++) {
      const { audienceId } = await seedAudience(scope, clock, {
        pageId,
        computedName: `Company ${p}-${a} · VP Sales`,
        personRouteKey: `person-${p}-${a}`,
        metadataOverride: a % 2 === 0 ? { title: `For company ${p}-${a}` } : null,
      });
      audiences.push({ pageId, audienceId });
    }
  }
  return { pageIds, audiences };
}

/** `count` sessions over the last 60 days, spread evenly over the tenant's audiences, in bulk. */
async function seedSessions(scope: TenantScope, seeded: Seeded, count: number, now: number) {
  const random = seededRandom(count);
  let done = 0;
  while (done < count) {
    const inThisTransaction = Math.min(ROWS_PER_TRANSACTION, count - done);
    await scope.transaction(async (tx) => {
      for (let i = 0; i < inThisTransaction; i += CHUNK) {
        const rows: SessionRow[] = [];
        for (let j = 0; j < Math.min(CHUNK, inThisTransaction - i); j++) {
          const target = seeded.audiences[(done + i + j) % seeded.audiences.length]!;
          rows.push(
            makeSession(
              random,
              { ...target, pageTitle: 'Hello', pageUrl: `https://go.example/${target.audienceId}` },
              now - Math.floor(random() * 60 * DAY),
            ),
          );
        }
        await insertSessions(tx, rows);
      }
    });
    done += inThisTransaction;
  }
}

/** One-week windows of the last 60 days on each page: what an analytics screen asks for. */
function weekPaths(pageIds: string[], now: number): string[] {
  const paths: string[] = [];
  for (let w = 0; w < 8; w++) {
    const end = new Date(now - w * 7 * DAY).toISOString();
    const start = new Date(now - (w + 1) * 7 * DAY).toISOString();
    for (const pageId of pageIds) paths.push(`/v0/pages/${pageId}/audience_sessions?startDate=${start}&endDate=${end}`);
  }
  return paths;
}

/**
 * Audiences and sessions: listing a page's sessions for one week must stay as fast with
 * 1,000,000 sessions in the tenant as with 10,000 (p99 within 2×: the listing is an index range).
 */
export const audiencesScenario: BenchScenario = {
  name: 'audiences',
  async run(ctx) {
    const now = ctx.clock.now().getTime();
    const largeCount = ctx.quick ? 100_000 : 1_000_000;
    const small = await ctx.createTenant('bench sessions 10k');
    const large = await ctx.createTenant(`bench sessions ${largeCount}`);
    const smallSeed = await seedPagesAndAudiences(small.scope, ctx.clock);
    const largeSeed = await seedPagesAndAudiences(large.scope, ctx.clock);
    const seedStarted = Date.now();
    await seedSessions(small.scope, smallSeed, 10_000, now);
    await seedSessions(large.scope, largeSeed, largeCount, now);
    const seedSeconds = Math.round((Date.now() - seedStarted) / 100) / 10;
    // Measure from a checkpointed database, not through a WAL holding the whole seed.
    if (ctx.engine === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.database.kysely);
    else await sql`vacuum analyze`.execute(ctx.database.kysely);

    const smallRun = await ctx.load({
      name: 'GET …/audience_sessions one week (10,000 in tenant)',
      path: '',
      paths: weekPaths(smallSeed.pageIds, now),
      apiKey: small.apiKey,
    });
    const largeRun = await ctx.load({
      name: `GET …/audience_sessions one week (${largeCount.toLocaleString('en')} in tenant)`,
      path: '',
      paths: weekPaths(largeSeed.pageIds, now),
      apiKey: large.apiKey,
      extra: { seededSessions: largeCount, seedSeconds },
    });
    ctx.record({
      ...largeRun,
      name: `p99 ratio sessions ${largeCount.toLocaleString('en')} vs 10,000 (goal ≤ 2)`,
      ratioToCeiling: null,
      extra: { p99Ratio: Math.round((largeRun.p99Ms / Math.max(smallRun.p99Ms, 1)) * 100) / 100 },
    });

    await ctx.load({
      name: 'GET /v0/pages/{id}/audiences (5 audiences)',
      path: '',
      paths: largeSeed.pageIds.map((id) => `/v0/pages/${id}/audiences`),
      apiKey: large.apiKey,
    });
    await ctx.load({
      name: 'POST /v0/pages/{id}/audiences/{id}/versions',
      method: 'POST',
      path: '',
      paths: smallSeed.audiences.map((a) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}/versions`),
      body: {},
      apiKey: small.apiKey,
      noCeiling: true,
    });
  },
};
