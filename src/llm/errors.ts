import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/**
 * What a job runner does with a failed provider call (docs/audience-versions.md#failures):
 * - `attempt`: a failed attempt on the retry schedule (timeouts, 5xx, connection errors, an
 *   answer that stays invalid after its repair);
 * - `retry_later`: the provider asked to come back after `retryAfterMs` (429 or 503 with
 *   Retry-After); the attempt does not count;
 * - `final`: retrying the same request cannot help (bad key, unknown model or path, a request the
 *   provider refuses as it is); the reason names the setting to fix;
 * - `over_budget`: the tenant's daily token budget is spent (token-budget.ts); no call was made, and
 *   `retryAfterMs` runs to the next UTC day. Not an attempt either.
 */
export type LlmFailureKind = 'attempt' | 'retry_later' | 'final' | 'over_budget';

/** Tokens and time spent by provider calls (summed over the calls of one piece of work). */
export interface LlmUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
  calls: number;
}

export class LlmError extends Error {
  constructor(
    message: string,
    readonly kind: LlmFailureKind,
    readonly details: { retryAfterMs?: number; status?: number; usage?: LlmUsage } = {},
  ) {
    super(message);
    this.name = 'LlmError';
  }

  /** The same failure, carrying what the calls before it had spent. */
  withUsage(usage: LlmUsage | undefined): LlmError {
    return usage === undefined ? this : new LlmError(this.message, this.kind, { ...this.details, usage });
  }
}

/** Longest wait a provider's Retry-After is honoured for: anything longer is capped. */
const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** Retry-After as seconds or an HTTP date, or OpenAI's `retry-after-ms`; null when absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | null {
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const raw = headers?.get('retry-after')?.trim();
  if (!raw) return null;
  const seconds = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) * 1000 : Date.parse(raw) - now;
  return Number.isFinite(seconds) ? Math.min(Math.max(0, Math.round(seconds)), MAX_RETRY_AFTER_MS) : null;
}

/** The provider's own words, short: enough to recognise, never a whole body. */
function providerMessage(error: APIError): string {
  const text = (error.error as { message?: unknown } | undefined)?.message;
  return typeof text === 'string' ? ` (${text.replace(/\s+/g, ' ').slice(0, 200)})` : '';
}

/**
 * Turns whatever the client threw into an LlmError. The reasons are stored with the version and
 * shown to the tenant's operator: they name the setting to fix and never carry the key.
 */
export function classifyProviderError(error: unknown, target: { baseUrl: string; model: string; timeoutMs: number }) {
  if (error instanceof LlmError) return error;
  if (error instanceof APIUserAbortError) return new LlmError('the provider call was cancelled', 'attempt');
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError(`the provider did not answer within LLM_TIMEOUT_MS (${target.timeoutMs} ms)`, 'attempt');
  }
  if (error instanceof APIConnectionError) {
    const cause = (error.cause as Error | undefined)?.message ?? error.message;
    return new LlmError(`could not reach LLM_BASE_URL (${target.baseUrl}): ${cause.slice(0, 200)}`, 'attempt');
  }
  if (!(error instanceof APIError) || error.status === undefined) {
    return new LlmError(
      `the provider call failed: ${String((error as Error)?.message ?? error).slice(0, 200)}`,
      'attempt',
    );
  }
  const status = error.status;
  const wait = retryAfterMs(error.headers);
  if ((status === 429 || status === 503) && wait !== null) {
    return new LlmError(`the provider is busy (${status}); retrying after ${wait} ms`, 'retry_later', {
      retryAfterMs: wait,
      status,
    });
  }
  if (status === 401) {
    return new LlmError('the provider refused the key (401): check LLM_API_KEY', 'final', { status });
  }
  if (status === 403) {
    return new LlmError(
      `the key may not use this model (403): check LLM_API_KEY and LLM_MODEL ("${target.model}")`,
      'final',
      {
        status,
      },
    );
  }
  if (status === 404) {
    return new LlmError(
      `no such model or path (404): check LLM_MODEL ("${target.model}") and LLM_BASE_URL (${target.baseUrl})${providerMessage(error)}`,
      'final',
      { status },
    );
  }
  if (status === 400 || status === 413 || status === 422) {
    // The same request would be refused again: e.g. a model without structured output.
    return new LlmError(
      `the provider refused the request (${status}); does LLM_MODEL ("${target.model}") support structured output?${providerMessage(error)}`,
      'final',
      { status },
    );
  }
  return new LlmError(`the provider failed (${status})${providerMessage(error)}`, 'attempt', { status });
}
