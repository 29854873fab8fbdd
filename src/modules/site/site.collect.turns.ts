/**
 * Visit events yield to page requests. A page hit is answered where its request is read (the
 * event loop's poll phase; site.pages.ahead.ts); a collect request's handler, which costs several
 * times a page hit, waits for its turn: at most `perTurn` handlers go on in each turn of the event
 * loop (its check phase, after the poll phase has read and answered every page request that
 * arrived). So when collection is saturated, a page request waits for a few collect handlers, not
 * for one of every connection's (docs/performance.md, "Collect on SQLite", page p99).
 *
 * A beacon is answered a turn later (a fraction of a millisecond when the loop is idle); nothing
 * is refused or dropped here, and the queue holds at most one waiter per open request.
 */
export class CollectTurns {
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  constructor(private readonly perTurn: number) {}

  /** Resolves in a later turn of the event loop, once the handlers queued before it have gone on. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#turn);
      }
    });
  }

  /** Handlers waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  readonly #turn = () => {
    const now = this.#waiting.splice(0, this.perTurn);
    for (const resolve of now) resolve();
    // An immediate queued from the check phase runs in the next turn, after that turn's poll phase.
    if (this.#waiting.length > 0) setImmediate(this.#turn);
    else this.#scheduled = false;
  };
}
