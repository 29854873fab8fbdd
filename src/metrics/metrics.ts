import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

/**
 * The service's Prometheus metrics (docs/performance.md#metrics), through prom-client.
 *
 * Counters and histograms that code deep in the service moves (ingest flushes, provider calls,
 * webhook deliveries, jobs) live in one registry per thread, `processMetrics`. What belongs to
 * one app instance (its request latencies, its page cache) lives in that app's own registry, so
 * that several apps in one process (tests) never share them. A scrape merges the app's registry,
 * the thread's, the background workers' thread and, under WEB_CONCURRENCY, every server process
 * (`aggregate`): counters and histograms add up across them.
 */
export const processMetrics = new Registry();

/** Metric JSON of one source (a registry, a thread, a process), as prom-client exchanges it. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const ingestBatchEvents = new Histogram({
  name: 'ap_ingest_batch_events',
  help: 'Visit events (starts and updates) written by one ingest flush',
  buckets: [1, 5, 25, 100, 250, 1000, 2500, 10000],
  registers: [processMetrics],
});

export const ingestFlushSeconds = new Histogram({
  name: 'ap_ingest_flush_seconds',
  help: 'Duration of one ingest transaction (a whole flush on PostgreSQL, at most 50 events on SQLite)',
  labelNames: ['outcome'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [processMetrics],
});

export const llmRequests = new Counter({
  name: 'ap_llm_requests_total',
  help: 'Calls to the language model provider, by kind (structured, stream) and outcome',
  labelNames: ['kind', 'outcome'] as const,
  registers: [processMetrics],
});

export const llmTokens = new Counter({
  name: 'ap_llm_tokens_total',
  help: 'Tokens the provider reported in `usage` (direction: input or output)',
  labelNames: ['direction'] as const,
  registers: [processMetrics],
});

export const llmRequestSeconds = new Histogram({
  name: 'ap_llm_request_seconds',
  help: 'Duration of one provider call (a stream: until its last chunk)',
  labelNames: ['kind'] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers: [processMetrics],
});

export const webhookAttempts = new Counter({
  name: 'ap_webhook_attempts_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed)',
  labelNames: ['outcome'] as const,
  registers: [processMetrics],
});

export const jobRuns = new Counter({
  name: 'ap_job_runs_total',
  help: 'Runs of leased background jobs, by kind and what came of them',
  labelNames: ['kind', 'outcome'] as const,
  registers: [processMetrics],
});

/** Every kind of leased job this thread runs: how to count its queue when scraped. */
const queues = new Map<string, () => Promise<{ waiting: number; running: number; oldestDueSeconds: number }>>();

/** The queue of a kind of job, counted at each scrape (the latest registration of a kind wins). */
export function observeJobQueue(
  kind: string,
  count: () => Promise<{ waiting: number; running: number; oldestDueSeconds: number }>,
): void {
  queues.set(kind, count);
}

new Gauge({
  name: 'ap_jobs',
  help: 'Leased background jobs by kind and state (waiting: queued or retrying; running: leased)',
  labelNames: ['kind', 'state'] as const,
  registers: [processMetrics],
  async collect() {
    this.reset();
    for (const [kind, count] of queues) {
      const { waiting, running, oldestDueSeconds } = await countQuietly(count);
      this.set({ kind, state: 'waiting' }, waiting);
      this.set({ kind, state: 'running' }, running);
      dueAge.set({ kind }, oldestDueSeconds);
    }
  },
});

const dueAge = new Gauge({
  name: 'ap_jobs_oldest_due_seconds',
  help: 'How long the oldest due, unclaimed job of a kind has been waiting (0: none): how far behind the workers are',
  labelNames: ['kind'] as const,
  registers: [processMetrics],
  aggregator: 'max',
});

async function countQuietly(count: () => Promise<{ waiting: number; running: number; oldestDueSeconds: number }>) {
  try {
    return await count();
  } catch {
    return { waiting: Number.NaN, running: Number.NaN, oldestDueSeconds: Number.NaN };
  }
}

let defaultsCollected = false;

/**
 * The process metrics prom-client knows (CPU, memory, heap, GC, event-loop delay, handles), once
 * per process, on the thread that serves requests.
 */
export function collectProcessDefaults(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: processMetrics, eventLoopMonitoringPrecision: 20 });
}

/** The metrics of `registries` as JSON (what a thread or process hands to the one that is scraped). */
export async function snapshotOf(...registries: Registry[]): Promise<MetricsSnapshot> {
  const all = await Promise.all(registries.map((r) => r.getMetricsAsJSON()));
  return all.flat() as MetricsSnapshot;
}

/** The Prometheus text of several sources: same-named metrics add up (or take their aggregator). */
export async function exposition(sources: MetricsSnapshot[]): Promise<string> {
  return AggregatorRegistry.aggregate(sources as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}

export const METRICS_CONTENT_TYPE = processMetrics.contentType;

export { Counter, Gauge, Histogram, Registry };
