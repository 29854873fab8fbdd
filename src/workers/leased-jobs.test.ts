import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { submitForEnrichment } from '../../test/factories/enrichment.js';
import { useTestApp, type Tenant } from '../../test/harness.js';
import {
  done,
  fail,
  LeasedJobs,
  retry,
  retryDelayMs,
  RETRY_DELAYS_MS,
  type LeasedJobKind,
  type LeasedRow,
  type LeaseSettings,
  type WorkResult,
} from './leased-jobs.js';

/**
 * The runner's contract, on a job kind of a few lines over a leased table of the schema (the
 * enrichment jobs' table, its rows queued as a form submission queues them; the enrichment's own
 * kind is tested with its module).
 */

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

type TestJob = LeasedRow & { form_submission_id: string; email: string };
type Work = (job: TestJob) => Promise<WorkResult<string, string>>;

function testJobs(work: Work, settings: Partial<LeaseSettings> = {}) {
  const finish = (status: string) => async (tx: Parameters<TestKind['complete']>[0], job: TestJob, text: string) => {
    await tx
      .updateTable('enrichment_jobs')
      .set({ status: status as 'enriched', lease_token: null, last_error: text })
      .where('form_submission_id', '=', job.form_submission_id)
      .execute();
    tx.afterCommit(`test-${status}`);
  };
  const kind: TestKind = {
    name: 'test-jobs',
    channel: 'test-jobs',
    table: 'enrichment_jobs',
    key: 'form_submission_id',
    columns: ['email'],
    statuses: { waiting: ['queued'], running: 'processing' },
    settings: { leaseMs: 10_000, maxAttempts: 3, concurrency: 4, pollMs: 60_000, ...settings },
    work,
    complete: finish('enriched'),
    fail: finish('failed'),
    interrupted: (job) => `lost on all ${job.attempts} attempts`,
    onRetry: (_job, reason) => ({ status: 'queued', last_error: reason }),
  };
  return new LeasedJobs(kind, { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) });
}
type TestKind = LeasedJobKind<'enrichment_jobs', TestJob, string, string, void>;

/** Queues `count` jobs of `tenant`, each due now. */
async function queue(tenant: Tenant, count = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await submitForEnrichment(tenant, t.clock, `job${i}@jobs.example`)).formSubmissionId);
  }
  return ids;
}

const row = (id: string) =>
  t.database.kysely
    .selectFrom('enrichment_jobs')
    .select(['status', 'attempts', 'last_error', 'available_at', 'lease_token'])
    .where('form_submission_id', '=', id)
    .executeTakeFirstOrThrow();
const waitedMs = async (id: string) => Date.parse((await row(id)).available_at) - t.clock.now().getTime();

beforeEach(async () => {
  await t.database.kysely.deleteFrom('enrichment_jobs').execute();
});

describe('the retry schedule', () => {
  it('is one schedule: 10 s, 1 min, 5 min, 30 min, then 30 min again', () => {
    expect(RETRY_DELAYS_MS).toEqual([10_000, 60_000, 300_000, 1_800_000]);
    expect([1, 2, 3, 4, 5, 9].map(retryDelayMs)).toEqual([10_000, 60_000, 300_000, 1_800_000, 1_800_000, 1_800_000]);
  });

  it('retries a failed run on it, and fails the job with the last failure once its attempts are used', async () => {
    const [id] = await queue(alice);
    const jobs = testJobs(async () => retry('provider down'));
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'retried' }]);
    expect(await row(id!)).toMatchObject({
      status: 'queued',
      attempts: 1,
      last_error: 'provider down',
      lease_token: null,
    });
    expect(await waitedMs(id!)).toBe(10_000);
    t.clock.advance(10_000);
    await jobs.drain();
    expect(await waitedMs(id!)).toBe(60_000);
    t.clock.advance(60_000);
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'failed' }]);
    expect(await row(id!)).toMatchObject({ status: 'failed', attempts: 3, last_error: 'provider down' });
  });

  it('fails at once on fail(), whatever attempts are left', async () => {
    const [id] = await queue(alice);
    expect(await testJobs(async () => fail('bad API key: check LLM_API_KEY')).drain()).toEqual([
      { key: id, outcome: 'failed' },
    ]);
    expect(await row(id!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: 'bad API key: check LLM_API_KEY',
    });
  });
});

describe('retry after a time the work asks for', () => {
  it('waits as asked without using an attempt (a 429, a budget): the job never fails from it', async () => {
    const [id] = await queue(alice);
    let calls = 0;
    const jobs = testJobs(async () =>
      ++calls <= 5 ? retry('429: try again later', { afterMs: 120_000, countsAsAttempt: false }) : done('answered'),
    );
    for (let i = 0; i < 5; i++) {
      expect(await jobs.drain()).toEqual([{ key: id, outcome: 'retried' }]);
      expect(await row(id!)).toMatchObject({ status: 'queued', attempts: 0, last_error: '429: try again later' });
      expect(await waitedMs(id!)).toBe(120_000);
      t.clock.advance(119_999);
      expect(await jobs.drain()).toEqual([]);
      t.clock.advance(1);
    }
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'completed' }]);
    expect(await row(id!)).toMatchObject({ status: 'enriched', attempts: 1, last_error: 'answered' });
  });

  it('never sooner than the schedule while the attempt counts, and never longer than maxRetryAfterMs', async () => {
    const [short, long] = await queue(alice, 2);
    const jobs = testJobs(
      async (job) => retry('busy', { afterMs: job.form_submission_id === short ? 1 : 86_400_000 }),
      {
        maxRetryAfterMs: 3_600_000,
      },
    );
    await jobs.drain();
    expect(await waitedMs(short!)).toBe(10_000);
    expect(await waitedMs(long!)).toBe(3_600_000);
  });
});

describe('leases', () => {
  it('gives up a job whose lease ran out on every attempt, with the kind’s failure', async () => {
    const [id] = await queue(alice);
    const jobs = testJobs(async () => done('never'), { leaseMs: 1_000, maxAttempts: 2 });
    for (let i = 0; i < 2; i++) {
      expect(await jobs.claim(1)).toHaveLength(1);
      t.clock.advance(1_000);
    }
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'given up' }]);
    expect(await row(id!)).toMatchObject({ status: 'failed', attempts: 2, last_error: 'lost on all 2 attempts' });
  });

  it('a run that throws is lost like a crashed worker’s: it runs again when its lease ends', async () => {
    const [id] = await queue(alice);
    let calls = 0;
    const jobs = testJobs(async () => {
      if (++calls === 1) throw new Error('a bug in the work');
      return done('second time');
    });
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'lost' }]);
    expect(await row(id!)).toMatchObject({ status: 'processing', attempts: 1 });
    t.clock.advance(10_000);
    expect(await jobs.drain()).toEqual([{ key: id, outcome: 'completed' }]);
  });
});

describe('fairness across tenants', () => {
  it('serves a tenant with one job in the first claim, whatever another tenant’s backlog', async () => {
    await queue(alice, 40);
    t.clock.advance(1);
    const [bobs] = await queue(bob);
    const claimed = await testJobs(async () => done('x')).claim(4);
    expect(claimed).toHaveLength(4);
    expect(claimed.map((j) => j.form_submission_id)).toContain(bobs);
  });

  it('the worker keeps a tenant to half of its slots, so another tenant’s job starts at once', async () => {
    await queue(alice, 10);
    t.clock.advance(1);
    const [bobs] = await queue(bob);
    const running: { tenant: string; id: string }[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const worker = testJobs(async (job) => {
      running.push({ tenant: job.tenant_id, id: job.form_submission_id });
      await gate;
      return done('x');
    }).worker();
    worker.start();
    try {
      for (let i = 0; i < 200 && running.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50));
      // 4 slots: Alice holds 2 (her share), Bob's one job runs beside them.
      expect(running.filter((r) => r.tenant === alice.tenantId)).toHaveLength(2);
      expect(running.map((r) => r.id)).toContain(bobs);
    } finally {
      release();
      await worker.stop();
    }
  });
});

describe('maxRunning', () => {
  it('caps the jobs running at once across processes; a lease that ran out frees its place', async () => {
    await queue(alice, 3);
    await queue(bob, 2);
    const processA = testJobs(async () => done('x'), { maxRunning: 2 });
    const processB = testJobs(async () => done('x'), { maxRunning: 2 });
    expect(await processA.claim(4)).toHaveLength(2);
    expect(await processB.claim(4)).toHaveLength(0);
    t.clock.advance(10_000); // process A died: its leases ran out
    expect(await processB.claim(4)).toHaveLength(2);
  });
});

describe('wake-ups', () => {
  it('what complete() registers is sent once its transaction committed; a stale result sends nothing', async () => {
    const [id] = await queue(alice);
    t.notified.length = 0;
    const jobs = testJobs(async () => done('x'));
    const [job] = await jobs.claim(1);
    expect(t.notified).toEqual([]);
    expect(await jobs.finish(job!, done('x'))).toEqual({ key: id, outcome: 'completed' });
    expect(t.notified).toEqual(['test-enriched']);
    expect(await jobs.finish(job!, done('again'))).toEqual({ key: id, outcome: 'stale' });
    expect(t.notified).toEqual(['test-enriched']);
  });
});
