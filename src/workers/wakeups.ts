import type { Logger } from 'pino';
import type { Database } from '../db/connect.js';
import { notificationChannel } from '../db/dialect.js';

/**
 * Wake-ups across processes (WEB_CONCURRENCY > 1, or several hosts) on PostgreSQL: a commit that
 * queues work wakes the workers of its own process at once, and `publish` tells the others with
 * NOTIFY, so no process waits for its next poll. Each process LISTENs on one channel per database
 * schema; the payload is `<pid>:<worker channel>`, and a process ignores its own messages. NOTIFY
 * is best effort: workers still poll, so a lost message only delays work. On SQLite there is one
 * process and nothing to do.
 */
export class CrossProcessWakeups {
  readonly #database: Database;
  readonly #logger: Logger;
  #channel: Awaited<ReturnType<typeof notificationChannel>> = null;
  #stop: (() => Promise<void>) | null = null;
  #pending = new Set<string>();
  #flushing = false;
  /** NOTIFYs on their way, which `stop` waits for. */
  readonly #sending = new Set<Promise<void>>();
  readonly #id: string;

  /** `id` names this process in the payload (its pid by default). */
  constructor(database: Database, logger: Logger, id: string = String(process.pid)) {
    this.#database = database;
    this.#logger = logger;
    this.#id = id;
  }

  /**
   * Starts publishing and, given `wake`, listening: `wake(channel)` is called for every worker
   * channel another process published. Without it (the CLI) this process only tells the others.
   */
  async start(wake?: (channel: string) => void): Promise<void> {
    const { engine, kysely, listen } = this.#database;
    const channel = await notificationChannel(engine, kysely, 'aps_wake_');
    if (channel === null || listen === undefined) return;
    this.#channel = channel;
    if (wake === undefined) return;
    const self = `${this.#id}:`;
    this.#stop = await listen(channel.name, (payload) => {
      if (!payload.startsWith(self)) wake(payload.slice(payload.indexOf(':') + 1));
    });
  }

  /** Tells the other processes that work is queued on `channel` (coalesced within one turn). */
  publish = (channel: string): void => {
    if (this.#channel === null) return;
    this.#pending.add(channel);
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => this.#flush());
  };

  #flush(): void {
    this.#flushing = false;
    const channels = [...this.#pending];
    this.#pending.clear();
    for (const c of channels) {
      const sent = this.#channel
        ?.notify(`${this.#id}:${c}`)
        .catch((err: unknown) => this.#logger.warn({ err, channel: c }, 'could not publish a wake-up'))
        .finally(() => this.#sending.delete(sent!));
      if (sent) this.#sending.add(sent);
    }
  }

  /** Sends what is still waiting to be published, then stops listening. */
  async stop(): Promise<void> {
    this.#flush();
    await Promise.all([...this.#sending]);
    const stop = this.#stop;
    this.#stop = null;
    this.#channel = null;
    await stop?.();
  }
}
