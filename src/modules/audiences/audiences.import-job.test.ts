import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { holdLease } from '../../workers/leased-jobs.js';
import { makePage } from '../../../test/factories/pages.js';
import { useTestApp, type Tenant } from '../../../test/harness.js';
import { importAudiencesCsvText } from './audiences.import.js';
import {
  audienceImportJobs,
  audienceImportKind,
  getImport,
  progressColumns,
  startImport,
} from './audiences.import-job.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

/** A console user of the tenant (the import's uploader). */
async function consoleUser(tenant: Tenant): Promise<string> {
  const id = newId('consoleUser');
  await tenant.scope
    .insertInto('console_users', {
      id,
      email: `${id}@acme.test`,
      invited_by: null,
      created_at: t.clock.now().toISOString(),
    })
    .execute();
  return id;
}

/** `count` targets (an email each); the lines listed in `bad` (1-based data rows) have a bad email. */
function targets(count: number, bad: number[] = []): string {
  const lines = ['email,name'];
  for (let i = 1; i <= count; i++)
    lines.push(bad.includes(i) ? `not-an-email-${i},Bad ${i}` : `p${i}@acme.test,P ${i}`);
  return lines.join('\n');
}

const jobsOf = () =>
  audienceImportJobs(
    { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
    { progressEveryMs: 0 },
  );

async function audienceCount(tenant: Tenant, pageId: string): Promise<number> {
  const row = await tenant.scope
    .selectFrom('audiences')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('page_id', '=', pageId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('console imports as leased jobs (audience_imports)', () => {
  it('a queued import shows its progress while it runs and ends with its summary; the file is dropped', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const userId = await consoleUser(alice);
    const id = await startImport(alice.scope, t.clock, {
      pageId,
      userId,
      fileName: 'targets.csv',
      csv: targets(60, [7, 41]),
    });
    expect(t.notified).toContain('audience-imports');
    const queued = await getImport(alice.scope, id);
    expect(queued).toMatchObject({ status: 'queued', rows: null, done: 0, created: 0, fileName: 'targets.csv' });

    // Read the row while the worker runs: the counts only grow, and some are read mid-way.
    const seen: { status: string; done: number; created: number }[] = [];
    let running = true;
    const watch = (async () => {
      while (running) {
        const s = await getImport(alice.scope, id);
        seen.push({ status: s.status, done: s.done, created: s.created });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const steps = await jobsOf().drain();
    running = false;
    await watch;
    expect(steps.map((s) => s.outcome)).toEqual(['completed']);
    const midway = seen.filter((s) => s.status === 'running' && s.done > 0 && s.done < 60);
    expect(midway.length).toBeGreaterThan(0);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.done).toBeGreaterThanOrEqual(seen[i - 1]!.done);

    const finished = await getImport(alice.scope, id);
    expect(finished).toMatchObject({ status: 'done', rows: 60, done: 60, created: 58, existing: 0, failed: 2 });
    expect(finished.errors.map((e) => [e.line, e.column])).toEqual([
      [8, 'email'],
      [42, 'email'],
    ]);
    expect(finished.finishedAt).not.toBeNull();
    expect(await audienceCount(alice, pageId)).toBe(58);
    const row = await alice.scope
      .selectFrom('audience_imports')
      .select(['csv'])
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row?.csv).toBeNull();
  });

  it('resumes after a crash from the progress it recorded: nothing is created twice', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const userId = await consoleUser(alice);
    const csv = targets(50, [3]);
    const id = await startImport(alice.scope, t.clock, { pageId, userId, fileName: 't.csv', csv });
    const jobs = jobsOf();
    const kind = audienceImportKind(t.clock);

    // A worker takes the job, records its progress after its first chunk, runs a second chunk
    // and dies before recording it.
    const [job] = await jobs.claim(1);
    expect(job).toBeDefined();
    const controller = new AbortController();
    let chunks = 0;
    let recorded = { itemsDone: 0, created: 0, failed: 0 };
    await importAudiencesCsvText(alice.scope, t.clock, pageId, 't.csv', csv, {
      signal: controller.signal,
      onChunk: async (p) => {
        chunks++;
        if (chunks === 1) {
          recorded = { itemsDone: p.itemsDone, created: p.created, failed: p.failed };
          await holdLease(kind, t.clock, alice.scope, job!, progressColumns(p));
        } else controller.abort();
      },
    });
    const ranTwice = await audienceCount(alice, pageId);
    expect(ranTwice).toBeGreaterThan(recorded.created);
    const midway = await getImport(alice.scope, id);
    expect(midway).toMatchObject({ status: 'running', rows: 50, created: recorded.created, failed: recorded.failed });

    // Its lease runs out; the next claim takes it over and finishes from where it was recorded.
    expect(await jobs.runDue()).toEqual([]);
    t.clock.advance(MINUTE_MS + 1);
    const steps = await jobs.drain();
    expect(steps.map((s) => s.outcome)).toEqual(['completed']);
    const unrecorded = ranTwice - recorded.created;
    const finished = await getImport(alice.scope, id);
    expect(finished).toMatchObject({
      status: 'done',
      rows: 50,
      done: 50,
      created: 49 - unrecorded,
      existing: unrecorded,
      failed: 1,
    });
    expect(finished.errors.map((e) => e.line)).toEqual([4]);
    expect(await audienceCount(alice, pageId)).toBe(49);
    const row = await alice.scope
      .selectFrom('audience_imports')
      .select(['attempts'])
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row?.attempts).toBe(2);
  });

  it('refuses a bad header or an archived page at once, and fails an import whose page went away', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const userId = await consoleUser(alice);
    await expect(
      startImport(alice.scope, t.clock, { pageId, userId, fileName: 'x.csv', csv: 'emial,name\na@b.test,A' }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      startImport(bob.scope, t.clock, { pageId, userId, fileName: 'x.csv', csv: targets(2) }),
    ).rejects.toMatchObject({ status: 404 });

    const id = await startImport(alice.scope, t.clock, { pageId, userId, fileName: 'x.csv', csv: targets(3) });
    const archived = await t.request(alice, { method: 'POST', url: `/v0/pages/${pageId}/archive`, payload: {} });
    expect(archived.statusCode).toBe(200);
    expect((await jobsOf().drain()).map((s) => s.outcome)).toEqual(['failed']);
    const failed = await getImport(alice.scope, id);
    expect(failed.status).toBe('failed');
    expect(failed.failure).toMatch(/archived/);
    await expect(getImport(bob.scope, id)).rejects.toMatchObject({ status: 404 });
  });
});
