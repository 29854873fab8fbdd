import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../test/harness.js';
import { DAY_MS, HOUR_MS } from '../lib/clock.js';
import { LlmError } from './errors.js';
import { estimateTokens, TokenBudget } from './token-budget.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

/** What `reserve` threw, or null when it held the tokens. */
async function refusal(work: Promise<unknown>): Promise<LlmError | null> {
  try {
    await work;
    return null;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
}

describe('the daily token budget', () => {
  it('counts what calls used per tenant and UTC day, and refuses a call once the day is spent', async () => {
    t.clock.set('2026-11-02T10:00:00.000Z');
    const budget = new TokenBudget(1_000, t.clock);
    const tokens = budget.for(alice.scope);
    const first = await tokens.reserve(600);
    expect(await tokens.remaining()).toMatchObject({ day: '2026-11-02', used: 0, reserved: 600, remaining: 400 });
    await tokens.record(first, { inputTokens: 700, outputTokens: 200 });
    expect(await tokens.remaining()).toMatchObject({ used: 900, reserved: 0, calls: 1, remaining: 100 });

    // still below the budget: one more call may start (and may end a little over it)
    await tokens.record(await tokens.reserve(600), { inputTokens: 150, outputTokens: 50 });
    expect(await tokens.remaining()).toMatchObject({ used: 1_100, calls: 2, remaining: 0 });

    const refused = await refusal(tokens.reserve(10));
    expect(refused?.kind).toBe('over_budget');
    expect(refused?.message).toBe(
      "the tenant's daily token budget is spent (1100 of LLM_DAILY_TOKEN_BUDGET 1000 tokens on 2026-11-02 UTC); it resumes at 2026-11-03T00:00:00.000Z",
    );
    expect(refused?.details.retryAfterMs).toBe(14 * HOUR_MS);

    // another tenant's day is its own
    expect((await budget.for(bob.scope).remaining()).remaining).toBe(1_000);
    await budget.for(bob.scope).reserve(10);

    // the next UTC day starts afresh
    t.clock.advance(14 * HOUR_MS);
    expect(await tokens.remaining()).toMatchObject({ day: '2026-11-03', used: 0, remaining: 1_000 });
    await tokens.reserve(10);
  });

  it('counts calls in flight by their estimate, so concurrent calls cannot all start on the same room', async () => {
    t.clock.set('2026-11-04T08:00:00.000Z');
    const tokens = new TokenBudget(10_000, t.clock).for(alice.scope);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => refusal(tokens.reserve(estimateTokens([{ content: 'x'.repeat(400) }], 2_900)))),
    );
    // each holds 3,000: after four of them 12,000 are reserved (the fourth started at 9,000 < 10,000)
    expect(outcomes.filter((o) => o === null)).toHaveLength(4);
    expect(outcomes.filter((o) => o?.kind === 'over_budget')).toHaveLength(4);
  });

  it('records a call that ended in the day it started, and gives back a call that got no answer', async () => {
    t.clock.set('2026-11-05T23:59:00.000Z');
    const tokens = new TokenBudget(5_000, t.clock).for(alice.scope);
    const late = await tokens.reserve(4_000);
    t.clock.advance(2 * 60_000);
    const early = await tokens.reserve(4_000);
    await tokens.record(late, { inputTokens: 3_000, outputTokens: 2_500 });
    await tokens.record(early, undefined);
    expect(await tokens.remaining()).toMatchObject({ day: '2026-11-06', used: 0, reserved: 0, remaining: 5_000 });
    t.clock.advance(-DAY_MS);
    expect(await tokens.remaining()).toMatchObject({ day: '2026-11-05', used: 5_500, reserved: 0, remaining: 0 });
  });

  it('without a budget (0) never refuses, and still counts', async () => {
    t.clock.set('2026-11-07T08:00:00.000Z');
    const tokens = new TokenBudget(0, t.clock).for(bob.scope);
    for (let i = 0; i < 3; i++) await tokens.record(await tokens.reserve(1e9), { inputTokens: 1e9, outputTokens: 0 });
    expect(await tokens.remaining()).toMatchObject({ used: 3e9, calls: 3, budget: null, remaining: null });
  });
});
