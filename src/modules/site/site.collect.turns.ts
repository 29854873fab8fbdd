/**
 * Visit events yield to page requests. A page hit is answered where its request is read (the
 * event loop's poll phase; site.pages.ahead.ts); a collect request, which costs several times a
 * page hit, is only routed there and then waits for its turn (the route's `onRequest` hook): at
 * most `perTurn` collect requests go on (body parsed, checked, handled) in each turn of the event
 * loop, in its check phase, after the poll phase has read and answered every page request that
 * arrived. So when collection is saturated, a page request waits for a few collect requests, not
 * for one of every connection's (docs/performance.md, "Collect on SQLite", page p99).
 *
 * A beacon is answered a turn later (a fraction of a millisecond when the loop is idle); nothing
 * is refused or dropped here, and the queue holds at most one waiter per open request.
 */
export class CollectTurns {
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  constructor(private readonly perTurn: number) {}

  /**
   * Calls `go` in a later turn of the event loop, once the requests queued before it have gone on
   * (a route's `onRequest` hook: everything after it, the body's parsing included, waits its turn).
   */
  wait(go: () => void): void {
    this.#waiting.push(go);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#turn);
    }
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  readonly #turn = () => {
    const now = this.#waiting.splice(0, this.perTurn);
    for (const go of now) go();
    // An immediate queued from the check phase runs in the next turn, after that turn's poll phase.
    if (this.#waiting.length > 0) setImmediate(this.#turn);
    else this.#scheduled = false;
  };
}
