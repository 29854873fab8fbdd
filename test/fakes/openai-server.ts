import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LlmClient } from '../../src/llm/client.js';

/**
 * A fake OpenAI-compatible provider for tests: a real HTTP server on 127.0.0.1 speaking
 * `POST /v1/chat/completions`, the way stripe-mock stands in for Stripe. Each test scripts its
 * answers (`answer(...)`, taken in order; `otherwise` when none is left) and reads what the
 * service sent (`requests`). Shared by generation (structured output) and the on-page agent
 * (streaming with `stream_options.include_usage`).
 */
export type FakeAnswer =
  /** A completion whose message content is `content` (an object is sent as its JSON text). */
  | { content: unknown; usage?: FakeUsage; delayMs?: number; finishReason?: 'stop' | 'length'; model?: string }
  /** An HTTP error with the provider's error body. */
  | { status: number; headers?: Record<string, string>; message?: string; delayMs?: number }
  /** A streamed answer (SSE `data:` chunks, then the usage chunk when asked for, then `[DONE]`). */
  | { stream: string[]; usage?: FakeUsage; delayMs?: number; chunkDelayMs?: number };

interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface FakeRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    response_format?: { type: string; json_schema?: { name: string; strict: boolean; schema: unknown } };
    max_completion_tokens?: number;
    [key: string]: unknown;
  };
}

const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 100, completion_tokens: 50 };

export class FakeOpenAI {
  readonly requests: FakeRequest[] = [];
  /** Requests being answered now, and the most there ever were at once (concurrency limits). */
  inFlight = 0;
  maxInFlight = 0;
  /** Requests whose caller hung up before the answer was complete (a timeout, a killed process). */
  abandoned = 0;
  /** The answer when no scripted one is left. */
  otherwise: FakeAnswer = { status: 500, message: 'no answer scripted' };
  readonly #queue: FakeAnswer[] = [];
  readonly #server: http.Server;
  readonly #timers = new Set<NodeJS.Timeout>();

  private constructor() {
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
  }

  static async start(): Promise<FakeOpenAI> {
    const fake = new FakeOpenAI();
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** A client of this provider, as a process's own (`sharedLlmClient`) would be, with `concurrency` slots. */
  client(concurrency: number): LlmClient {
    return new LlmClient({
      baseUrl: this.baseUrl,
      apiKey: null,
      model: 'test-model',
      timeoutMs: 10_000,
      maxOutputTokens: 1_000,
      concurrency,
    });
  }

  /** `http://127.0.0.1:<port>/v1`: what LLM_BASE_URL would be. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Scripts the next answers, in order. */
  answer(...answers: FakeAnswer[]): this {
    this.#queue.push(...answers);
    return this;
  }

  /** Forgets scripted answers and recorded requests (between tests). */
  reset(): void {
    this.#queue.length = 0;
    this.requests.length = 0;
    this.maxInFlight = this.inFlight;
    this.otherwise = { status: 500, message: 'no answer scripted' };
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse) {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let closed = false;
    res.once('close', () => {
      closed = true;
      this.inFlight--;
      if (!res.writableFinished) this.abandoned++;
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
    }
    let body: FakeRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
    }
    this.requests.push({ path, headers: req.headers, body });
    const answer = this.#queue.shift() ?? this.otherwise;
    if (answer.delayMs) {
      await this.#sleep(answer.delayMs);
      // the client gave up (its timeout): nothing to answer. (`req` is destroyed once its body was read.)
      if (closed) return;
    }
    const model = 'model' in answer && answer.model ? answer.model : body.model;
    if ('status' in answer) {
      for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
      return send(res, answer.status, {
        error: { message: answer.message ?? `status ${answer.status}`, type: 'error' },
      });
    }
    const base = { id: `chatcmpl-${this.requests.length}`, created: 1_790_000_000, model };
    if ('stream' in answer) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      for (const [i, text] of answer.stream.entries()) {
        // pieces a while apart, as a model writes them (streaming tests)
        if (i > 0 && answer.chunkDelayMs) await this.#sleep(answer.chunkDelayMs);
        if (closed) return;
        event({
          ...base,
          object: 'chat.completion.chunk',
          choices: [
            {
              index: 0,
              delta: i === 0 ? { role: 'assistant', content: text } : { content: text },
              finish_reason: i === answer.stream.length - 1 ? 'stop' : null,
            },
          ],
        });
      }
      if (body.stream_options?.include_usage) {
        const usage = answer.usage ?? DEFAULT_USAGE;
        event({ ...base, object: 'chat.completion.chunk', choices: [], usage: withTotal(usage) });
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    const content = typeof answer.content === 'string' ? answer.content : JSON.stringify(answer.content);
    send(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          finish_reason: answer.finishReason ?? 'stop',
          logprobs: null,
        },
      ],
      usage: withTotal(answer.usage ?? DEFAULT_USAGE),
    });
  }
}

function withTotal(usage: FakeUsage) {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
