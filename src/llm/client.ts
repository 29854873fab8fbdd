import OpenAI from 'openai';
import PQueue from 'p-queue';
import type { Config } from '../config.js';
import { llmRequests, llmRequestSeconds, llmTokens } from '../metrics/metrics.js';
import { classifyProviderError, LlmError, type LlmUsage } from './errors.js';
import { estimateTokens, type TenantTokens, type TokenReservation } from './token-budget.js';

/**
 * The language-model plumbing every feature shares (generation now, the on-page agent next): one
 * client per process for an OpenAI-compatible Chat Completions endpoint, built from the LLM_*
 * settings, with the process's limit of calls in flight, typed failures (errors.ts) and the usage
 * of every call. It knows no resource: prompts and schemas belong to the module that sends them.
 * ADR 0007 says why the official `openai` package.
 */
export interface LlmSettings {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  maxOutputTokens: number;
  concurrency: number;
}

/** The settings when a model is configured (LLM_BASE_URL and LLM_MODEL), else null. */
function llmSettings(config: Config): LlmSettings | null {
  if (config.llmBaseUrl === null || config.llmModel === null) return null;
  return {
    baseUrl: config.llmBaseUrl,
    apiKey: config.llmApiKey,
    model: config.llmModel,
    timeoutMs: config.llmTimeoutMs,
    maxOutputTokens: config.llmMaxOutputTokens,
    concurrency: config.llmConcurrency,
  };
}

const clients = new WeakMap<Config, LlmClient>();

/**
 * The process's one client for `config` (null without a model): generation and the on-page agent
 * share it, so LLM_CONCURRENCY bounds the calls the process has in flight, whoever makes them.
 */
export function sharedLlmClient(config: Config): LlmClient | null {
  const settings = llmSettings(config);
  if (settings === null) return null;
  let client = clients.get(config);
  if (client === undefined) clients.set(config, (client = new LlmClient(settings)));
  return client;
}

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What every call may carry besides its messages. */
interface CallOptions {
  messages: LlmMessage[];
  signal?: AbortSignal;
  /**
   * The tenant's daily allowance (token-budget.ts, `budget.for(scope)`): the call reserves its
   * estimate first (refused: LlmError `over_budget`, no call made) and records its usage after.
   */
  budget?: TenantTokens;
  /** Another model of the same endpoint (e.g. LLM_AGENT_MODEL); default LLM_MODEL. */
  model?: string;
  /** A lower cap on the answer's tokens than LLM_MAX_OUTPUT_TOKENS (e.g. the agent's short answers). */
  maxOutputTokens?: number;
}

/** A call asking for JSON that matches `schema` (strict structured output, strict-schema.ts). */
export interface StructuredCall extends CallOptions {
  schemaName: string;
  schema: Record<string, unknown>;
}

export interface LlmAnswer {
  /** The answer's text: for a structured call, JSON that still has to be validated. */
  text: string;
  usage: LlmUsage;
}

export class LlmClient {
  readonly #openai: OpenAI;
  readonly #slots: PQueue;

  constructor(
    readonly settings: LlmSettings,
    options: { fetch?: typeof fetch } = {},
  ) {
    this.#openai = new OpenAI({
      baseURL: settings.baseUrl,
      // The SDK insists on a key; without one (local servers) the header is taken out again below.
      apiKey: settings.apiKey ?? 'none',
      defaultHeaders: settings.apiKey === null ? { Authorization: null } : undefined,
      // Given explicitly so that no OPENAI_* variable of the environment changes what is sent.
      organization: null,
      project: null,
      webhookSecret: null,
      // The job runner retries, on its own schedule and with its own accounting.
      maxRetries: 0,
      timeout: settings.timeoutMs,
      logLevel: 'off',
      fetch: options.fetch,
    });
    this.#slots = new PQueue({ concurrency: settings.concurrency });
  }

  /** One call for structured output; throws an LlmError (errors.ts) on any failure. */
  async structured(call: StructuredCall): Promise<LlmAnswer> {
    const release = await this.#slot();
    const started = performance.now();
    let reservation: TokenReservation | undefined;
    let usage: LlmUsage | undefined;
    try {
      reservation = await call.budget?.reserve(estimateTokens(call.messages, this.settings.maxOutputTokens));
      const completion = await this.#openai.chat.completions.create(
        {
          model: this.settings.model,
          messages: call.messages,
          response_format: {
            type: 'json_schema',
            json_schema: { name: call.schemaName, strict: true, schema: call.schema },
          },
          max_completion_tokens: this.settings.maxOutputTokens,
        },
        { signal: call.signal },
      );
      usage = this.#usage(completion.model, completion.usage, started);
      countCall('structured', 'answered', usage);
      const choice = completion.choices[0];
      if (choice?.message.refusal) {
        throw new LlmError(`the model refused: ${choice.message.refusal.slice(0, 200)}`, 'attempt', { usage });
      }
      if (choice?.finish_reason === 'length') {
        throw new LlmError(
          `the answer was cut off at LLM_MAX_OUTPUT_TOKENS (${this.settings.maxOutputTokens})`,
          'attempt',
          { usage },
        );
      }
      const text = choice?.message.content;
      if (typeof text !== 'string' || text === '') throw new LlmError('the answer was empty', 'attempt', { usage });
      return { text, usage };
    } catch (error) {
      if (usage === undefined) countCall('structured', outcomeOf(error));
      throw classifyProviderError(error, this.settings);
    } finally {
      release();
      if (reservation !== undefined) await call.budget!.record(reservation, usage);
    }
  }

  /**
   * A streamed answer (SSE, `stream_options.include_usage`): yields the text as it comes and
   * returns the usage once the stream ends. Holds one of the process's slots while it streams.
   */
  async *stream(call: CallOptions): AsyncGenerator<string, LlmUsage> {
    const release = await this.#slot(VISITOR_WAITING);
    const started = performance.now();
    let reservation: TokenReservation | undefined;
    let usage: LlmUsage | undefined;
    let streamed = 0;
    const requested = call.model ?? this.settings.model;
    const maxTokens = Math.min(call.maxOutputTokens ?? this.settings.maxOutputTokens, this.settings.maxOutputTokens);
    const target = { ...this.settings, model: requested };
    try {
      reservation = await call.budget?.reserve(estimateTokens(call.messages, maxTokens));
      const chunks = await this.#openai.chat.completions.create(
        {
          model: requested,
          messages: call.messages,
          stream: true,
          stream_options: { include_usage: true },
          max_completion_tokens: maxTokens,
        },
        { signal: call.signal },
      );
      let model = requested;
      let reported: OpenAI.CompletionUsage | undefined;
      for await (const chunk of chunks) {
        if (chunk.model) model = chunk.model;
        if (chunk.usage) reported = chunk.usage;
        const delta = chunk.choices[0]?.delta?.content;
        if (delta) {
          streamed += delta.length;
          yield delta;
        }
      }
      usage = this.#usage(model, reported, started);
      countCall('stream', 'answered', usage);
      return usage;
    } catch (error) {
      countCall('stream', outcomeOf(error));
      throw classifyProviderError(error, target);
    } finally {
      release();
      // A stream cut short (the reader left) reports no usage: what it was sent and sent back is counted.
      const spent = usage ?? {
        inputTokens: streamed === 0 ? 0 : estimateTokens(call.messages, 0),
        outputTokens: Math.ceil(streamed / 4),
      };
      if (reservation !== undefined) await call.budget!.record(reservation, spent);
    }
  }

  /**
   * Waits for one of the process's LLM_CONCURRENCY slots; the function returned gives it back.
   * A higher `priority` goes first: a visitor waiting on an answer before the versions the
   * generation worker has claimed ahead (LLM_CLAIM_AHEAD).
   */
  async #slot(priority = 0): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await new Promise<void>((started) => {
      void this.#slots.add(
        () => {
          started();
          return held;
        },
        { priority },
      );
    });
    return release;
  }

  #usage(model: string, usage: OpenAI.CompletionUsage | null | undefined, started: number): LlmUsage {
    return {
      model: model || this.settings.model,
      inputTokens: usage?.prompt_tokens ?? 0,
      outputTokens: usage?.completion_tokens ?? 0,
      durationMs: Math.round(performance.now() - started),
      calls: 1,
    };
  }
}

/** The slot priority of a call a visitor is waiting on (the on-page agent's answers). */
const VISITOR_WAITING = 1;

/** One provider call in the metrics: its outcome, duration and the tokens its `usage` reported. */
function countCall(kind: 'structured' | 'stream', outcome: string, usage?: LlmUsage): void {
  llmRequests.inc({ kind, outcome });
  if (usage === undefined) return;
  llmRequestSeconds.observe({ kind }, (usage.durationMs ?? 0) / 1000);
  llmTokens.inc({ direction: 'input' }, usage.inputTokens);
  llmTokens.inc({ direction: 'output' }, usage.outputTokens);
}

/** A failed call's outcome label: the provider's status class, or what went wrong before one came. */
function outcomeOf(error: unknown): string {
  if (error instanceof LlmError && error.kind === 'over_budget') return 'over_budget';
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') return status === 429 ? 'rate_limited' : `http_${Math.floor(status / 100)}xx`;
  if ((error as { name?: unknown }).name === 'AbortError') return 'aborted';
  return 'error';
}
