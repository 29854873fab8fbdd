import { describe, expect, it } from 'vitest';
import { oldSubmission, storedIds as ids } from '../../../test/factories/retention.js';
import { useTestApp } from '../../../test/harness.js';
import { pruneFormSubmissions } from './form-submissions.retention.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;
const submission = (
  tenant: (typeof t.tenants)[number],
  daysAgo: number,
  job: { status: string; completedDaysAgo: number | null },
) => oldSubmission(tenant, t.clock, daysAgo, job);

describe('retention of form submissions (FORM_SUBMISSION_RETENTION_DAYS)', () => {
  it('deletes submissions past it with their job, clears the identity on their session, keeps the rest', async () => {
    const old = await submission(alice, 31, { status: 'enriched', completedDaysAgo: 31 });
    const oldBob = await submission(bob, 40, { status: 'queued', completedDaysAgo: null });
    const recent = await submission(alice, 29, { status: 'queued', completedDaysAgo: null });
    expect(await pruneFormSubmissions(t.database.kysely, t.clock, 30)).toBe(2);
    expect(await pruneFormSubmissions(t.database.kysely, t.clock, 30)).toBe(0);
    expect(await ids(alice, 'form_submissions')).toEqual([recent.id]);
    expect(await ids(bob, 'form_submissions')).toEqual([]);
    expect(await ids(alice, 'enrichment_jobs')).toEqual([recent.id]);
    const sessions = await t.database.kysely
      .selectFrom('audience_sessions')
      .select(['id', 'form_submission_id', 'form_submission_email', 'has_form_submit'])
      .where('id', 'in', [old.sessionId, oldBob.sessionId, recent.sessionId])
      .execute();
    expect(sessions).toHaveLength(3);
    for (const s of sessions) {
      expect(s.has_form_submit).toBe(true);
      if (s.id === recent.sessionId) expect(s.form_submission_email).toContain('@corp.example');
      else expect(s).toMatchObject({ form_submission_id: '', form_submission_email: '' });
    }
  });
});
