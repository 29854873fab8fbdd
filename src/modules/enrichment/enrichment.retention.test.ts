import { describe, expect, it } from 'vitest';
import { oldSubmission, storedIds as ids } from '../../../test/factories/retention.js';
import { useTestApp } from '../../../test/harness.js';
import { pruneEnrichmentJobs } from './enrichment.retention.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;
const submission = (
  tenant: (typeof t.tenants)[number],
  daysAgo: number,
  job: { status: string; completedDaysAgo: number | null },
) => oldSubmission(tenant, t.clock, daysAgo, job);

describe('retention of enrichment jobs (ENRICHMENT_JOB_RETENTION_DAYS)', () => {
  it('deletes finished jobs that ended before it, never queued or running ones', async () => {
    const enriched = await submission(alice, 50, { status: 'enriched', completedDaysAgo: 31 });
    const failed = await submission(bob, 50, { status: 'failed', completedDaysAgo: 45 });
    const recentlyDone = await submission(alice, 50, { status: 'enriched', completedDaysAgo: 29 });
    const queued = await submission(alice, 50, { status: 'queued', completedDaysAgo: null });
    const running = await submission(alice, 50, { status: 'processing', completedDaysAgo: null });
    expect(await pruneEnrichmentJobs(t.database.kysely, t.clock, 30)).toBe(2);
    expect(await pruneEnrichmentJobs(t.database.kysely, t.clock, 30)).toBe(0);
    expect(await ids(alice, 'enrichment_jobs')).toEqual([recentlyDone.id, queued.id, running.id].sort());
    expect(await ids(bob, 'enrichment_jobs')).toEqual([]);
    // the submissions themselves stay (their own retention is longer)
    expect(await ids(alice, 'form_submissions')).toContain(enriched.id);
    expect(await ids(bob, 'form_submissions')).toEqual([failed.id]);
  });
});
