import { sql } from 'kysely';
import type { TenantScope } from '../db/tenant-scope.js';
import { DAY_MS, type Clock } from '../lib/clock.js';
import { LlmError, type LlmUsage } from './errors.js';

/**
 * The per-tenant DAILY TOKEN BUDGET, shared by every provider call of the service (generation and
 * the on-page agent alike): one ledger row per tenant and UTC day (`llm_token_days`, migration
 * 0026). docs/audience-versions.md#the-daily-token-budget says what a tenant sees.
 *
 * How a caller uses it (LlmClient does it for every call given a `budget`):
 *
 *     const tokens = budget.for(scope);                   // the tenant's allowance
 *     const reservation = await tokens.reserve(estimate); // refused: throws LlmError 'over_budget'
 *     try { …the provider call… } finally { await tokens.record(reservation, usage); }
 *
 * - `reserve(estimate)` starts a call only while the day's used + reserved tokens are below the
 *   budget (`LLM_DAILY_TOKEN_BUDGET`; 0: no budget, the ledger still counts), and holds `estimate`
 *   (estimateTokens: the prompt's characters / 4 + the answer's cap) until the call ends; one
 *   statement, so concurrent calls (any process) never all see the same room. A day can end over
 *   its budget by what the calls then in flight spent beyond their estimates, never by more calls.
 * - `record(reservation, usage)` gives the estimate back and adds what the provider reported
 *   (`usage`; nothing for a call that never got an answer), on the day the call started.
 * - `remaining()` reads the day so far.
 *
 * Refused, a call gets an LlmError of kind `over_budget` whose `retryAfterMs` runs to the next UTC
 * midnight: generation waits until then with the reason on the version (not an attempt), the
 * agent answers without the model. A process that dies mid-call leaves its estimate reserved
 * until the day ends (so a crash can only make the budget stricter, never let more through).
 */
export class TokenBudget {
  /** `dailyTokens`: the budget of each tenant per UTC day; 0 or null: no budget (usage still counted). */
  constructor(
    readonly dailyTokens: number | null,
    readonly clock: Clock,
  ) {}

  /** The allowance of the tenant `scope` belongs to. */
  for(scope: TenantScope): TenantTokens {
    return new TenantTokens(this, scope);
  }
}

/** Tokens held for one call in flight, from `reserve` until `record`. */
export interface TokenReservation {
  day: string;
  tokens: number;
}

/** A tenant's day so far; `remaining` is null without a budget. */
export interface TokenDay {
  day: string;
  budget: number | null;
  used: number;
  reserved: number;
  calls: number;
  remaining: number | null;
}

/** The start of the UTC day of `at` (`2026-11-26`). */
function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Milliseconds from `at` to the next UTC midnight (when a spent budget is whole again). */
function untilNextDay(at: Date): number {
  return Date.parse(`${utcDay(at)}T00:00:00.000Z`) + DAY_MS - at.getTime();
}

/** What a call may spend: its prompt at ~4 characters a token, plus the cap on its answer. */
export function estimateTokens(messages: readonly { content: string }[], maxOutputTokens: number): number {
  const characters = messages.reduce((n, m) => n + m.content.length, 0);
  return Math.ceil(characters / 4) + maxOutputTokens;
}

/** One tenant's allowance: see TokenBudget. */
export class TenantTokens {
  readonly #budget: TokenBudget;
  readonly #scope: TenantScope;

  constructor(budget: TokenBudget, scope: TenantScope) {
    this.#budget = budget;
    this.#scope = scope;
  }

  get #limit(): number | null {
    const daily = this.#budget.dailyTokens;
    return daily === null || daily <= 0 ? null : daily;
  }

  /** Holds `estimate` tokens for a call, or throws LlmError `over_budget` when the day's budget is spent. */
  async reserve(estimate: number): Promise<TokenReservation> {
    const now = this.#budget.clock.now();
    const day = utcDay(now);
    const tokens = Math.max(0, Math.ceil(estimate));
    const limit = this.#limit;
    const updatedAt = now.toISOString();
    const held = await this.#scope
      .insertInto('llm_token_days', { day, used_tokens: 0, reserved_tokens: tokens, calls: 0, updated_at: updatedAt })
      .onConflict((oc) => {
        const more = oc.columns(['tenant_id', 'day']).doUpdateSet({
          reserved_tokens: sql<number>`llm_token_days.reserved_tokens + ${tokens}`,
          updated_at: updatedAt,
        });
        return limit === null
          ? more
          : more.where(sql<boolean>`llm_token_days.used_tokens + llm_token_days.reserved_tokens < ${limit}`);
      })
      .returning('day')
      .executeTakeFirst();
    if (held !== undefined) return { day, tokens };
    const spent = await this.remaining();
    const waitMs = untilNextDay(now);
    throw new LlmError(
      `the tenant's daily token budget is spent (${spent.used + spent.reserved} of LLM_DAILY_TOKEN_BUDGET ${limit} tokens on ${day} UTC); it resumes at ${new Date(now.getTime() + waitMs).toISOString()}`,
      'over_budget',
      { retryAfterMs: waitMs },
    );
  }

  /** Ends a call: gives its estimate back and counts what the provider reported (none: no answer came). */
  async record(reservation: TokenReservation, usage: Pick<LlmUsage, 'inputTokens' | 'outputTokens'> | undefined) {
    const spent = usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
    const held = reservation.tokens;
    await this.#scope
      .updateTable('llm_token_days')
      .set({
        used_tokens: sql<number>`used_tokens + ${spent}`,
        reserved_tokens: sql<number>`case when reserved_tokens > ${held} then reserved_tokens - ${held} else 0 end`,
        calls: sql<number>`calls + 1`,
        updated_at: this.#budget.clock.now().toISOString(),
      })
      .where('day', '=', reservation.day)
      .execute();
  }

  /** The tenant's day so far. */
  async remaining(): Promise<TokenDay> {
    const day = utcDay(this.#budget.clock.now());
    const row = await this.#scope
      .selectFrom('llm_token_days')
      .select(['used_tokens', 'reserved_tokens', 'calls'])
      .where('day', '=', day)
      .executeTakeFirst();
    const used = Number(row?.used_tokens ?? 0);
    const reserved = Number(row?.reserved_tokens ?? 0);
    const budget = this.#limit;
    return {
      day,
      budget,
      used,
      reserved,
      calls: Number(row?.calls ?? 0),
      remaining: budget === null ? null : Math.max(0, budget - used - reserved),
    };
  }
}
