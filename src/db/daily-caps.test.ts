import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../test/harness.js';
import { blockOf, DailyCap, type DailyCapKind } from './daily-caps.js';

/** The per-tenant daily caps (issue 26, docs/pages-runtime.md#daily-caps), shared by processes. */
const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;
const silent = pino({ level: 'silent' });

/** A process's cap: each instance holds its own places in memory, as each process does. */
const processCap = (limit: number, kind: DailyCapKind = 'sessions') =>
  new DailyCap(t.database, t.clock, silent, kind, limit);

const granted = async (tenantId: string, kind: DailyCapKind) => {
  const rows = await t.database.kysely
    .selectFrom('tenant_daily_counts')
    .select(['day', 'granted'])
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', kind)
    .execute();
  return rows.map((r) => ({ day: r.day, granted: Number(r.granted) }));
};

describe('a daily cap', () => {
  it('hands out exactly the cap across processes taking at once, then refuses until the next UTC day', async () => {
    t.clock.set('2026-11-02T23:59:00.000Z');
    const processes = [processCap(7), processCap(7), processCap(7)];
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => processes[i % 3]!.take(alice.tenantId)));
    expect(answers.filter((a) => a.ok)).toHaveLength(7);
    expect(answers.find((a) => !a.ok)).toEqual({ ok: false, retryAfterSeconds: 60 });
    expect(await granted(alice.tenantId, 'sessions')).toEqual([{ day: '2026-11-02', granted: 7 }]);

    // Another tenant, and another kind, have their own places.
    expect(await processCap(7).take(bob.tenantId)).toEqual({ ok: true });
    expect(await processCap(7, 'form_submissions').take(alice.tenantId)).toEqual({ ok: true });

    t.clock.advance(60_000);
    expect(await processes[0]!.take(alice.tenantId)).toEqual({ ok: true });
    expect(await granted(alice.tenantId, 'sessions')).toContainEqual({ day: '2026-11-03', granted: 1 });
  });

  it('takes places in blocks (one statement per block), and one by one near the cap', async () => {
    t.clock.set('2026-11-05T10:00:00.000Z');
    expect(blockOf(1_000_000)).toBe(100);
    expect(blockOf(20_000)).toBe(20);
    expect(blockOf(7)).toBe(1);
    const [first, second] = [processCap(25_000, 'form_submissions'), processCap(25_000, 'form_submissions')];
    for (let i = 0; i < 25; i++) expect((await first.take(alice.tenantId)).ok).toBe(true);
    expect(await granted(alice.tenantId, 'form_submissions')).toContainEqual({ day: '2026-11-05', granted: 25 });
    await second.take(alice.tenantId);
    expect(await granted(alice.tenantId, 'form_submissions')).toContainEqual({ day: '2026-11-05', granted: 50 });

    // 24,950 more places are taken elsewhere: 50 are left, given in blocks while a block fits.
    await t.database.kysely
      .updateTable('tenant_daily_counts')
      .set({ granted: 24_990 })
      .where('tenant_id', '=', alice.tenantId)
      .where('kind', '=', 'form_submissions')
      .where('day', '=', '2026-11-05')
      .execute();
    const late = processCap(25_000, 'form_submissions');
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push((await late.take(alice.tenantId)).ok);
    expect(answers).toEqual([...Array(10).fill(true), false, false]);
  });

  it('counts nothing when off (0)', async () => {
    const off = processCap(0);
    for (let i = 0; i < 5; i++) expect(await off.take(bob.tenantId)).toEqual({ ok: true });
    expect(await granted(bob.tenantId, 'sessions')).toEqual([{ day: '2026-11-02', granted: 1 }]);
  });
});
