import cluster, { type Worker } from 'node:cluster';
import type { MetricsSnapshot } from '../metrics/metrics.js';

/**
 * Metrics under WEB_CONCURRENCY: the server processes share one port, so a scrape reaches any one
 * of them, and that one answers for all. It asks the primary, which collects every process's own
 * snapshots (its app, its thread, its background workers) and hands them back to add up.
 */
type Ask = { type: 'ap:metrics:ask'; id: number };
type Collect = { type: 'ap:metrics:collect'; id: number };
type Local = { type: 'ap:metrics:local'; id: number; snapshots: MetricsSnapshot[] };
type All = { type: 'ap:metrics:all'; id: number; snapshots: MetricsSnapshot[] };

/** How long a scrape waits for the other processes before answering with what it has. */
const WAIT_MS = 2000;

/**
 * In a server process of the cluster: answers the primary's collects with `local()`, and returns
 * the function a scrape calls to get every process's snapshots (its own alone if the primary is
 * silent).
 */
export function clusterWorkerMetrics(local: () => Promise<MetricsSnapshot[]>): () => Promise<MetricsSnapshot[]> {
  const waiting = new Map<number, (snapshots: MetricsSnapshot[]) => void>();
  let asked = 0;
  process.on('message', (message: Collect | All) => {
    if (message?.type === 'ap:metrics:collect') {
      void local().then((snapshots) =>
        process.send?.({ type: 'ap:metrics:local', id: message.id, snapshots } satisfies Local),
      );
    } else if (message?.type === 'ap:metrics:all') waiting.get(message.id)?.(message.snapshots);
  });
  return () =>
    new Promise((resolve) => {
      const id = asked++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        void local().then(resolve);
      }, WAIT_MS + 500);
      waiting.set(id, (snapshots) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(snapshots);
      });
      process.send?.({ type: 'ap:metrics:ask', id } satisfies Ask);
    });
}

/** In the primary: answers each process's ask with the snapshots of every live process. */
export function answerClusterMetrics(): void {
  const collecting = new Map<number, { snapshots: MetricsSnapshot[]; left: number; finish: () => void }>();
  let collects = 0;
  cluster.on('message', (worker: Worker, message: Ask | Local) => {
    if (message?.type === 'ap:metrics:local') {
      const collect = collecting.get(message.id);
      if (collect === undefined) return;
      collect.snapshots.push(...message.snapshots);
      if (--collect.left === 0) collect.finish();
      return;
    }
    if (message?.type !== 'ap:metrics:ask') return;
    const id = collects++;
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
    const snapshots: MetricsSnapshot[] = [];
    const finish = () => {
      clearTimeout(timer);
      collecting.delete(id);
      if (worker.isConnected()) worker.send({ type: 'ap:metrics:all', id: message.id, snapshots } satisfies All);
    };
    const timer = setTimeout(finish, WAIT_MS);
    collecting.set(id, { snapshots, left: live.length, finish });
    for (const w of live) w.send({ type: 'ap:metrics:collect', id } satisfies Collect);
  });
}
