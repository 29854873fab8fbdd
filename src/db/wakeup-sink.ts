/**
 * Where a database's committed wake-ups go. A transaction that queues work for a background
 * worker names the worker's channel (`scope.afterCommit(channel)`); once it has committed, the
 * channel is sent here, and from here to whatever the composition root connected: this process's
 * workers, the workers' thread, other processes (workers/wakeups.ts). Nothing connected: the
 * workers find the work on their next poll.
 */
export class WakeupSink {
  readonly #targets = new Set<(channel: string) => void>();

  /** Sends every committed wake-up to `target` from now on; returns what undoes it. */
  connect(target: (channel: string) => void): () => void {
    this.#targets.add(target);
    return () => this.#targets.delete(target);
  }

  send(channel: string): void {
    for (const target of this.#targets) target(channel);
  }
}
