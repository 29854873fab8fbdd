/**
 * The units of work a worker has in flight, by tenant: at most `concurrency` in all, and at most
 * half of them (rounded up) for any one tenant, so that a tenant with a large backlog or a slow
 * provider never holds every slot and the others always find room.
 */
export class TenantSlots {
  /** The most one tenant may hold. */
  readonly perTenant: number;
  readonly #busy = new Map<string, number>();
  #inFlight = 0;

  /** `perTenant`: the most one tenant may hold (default half of `concurrency`, rounded up). */
  constructor(
    readonly concurrency: number,
    perTenant?: number,
  ) {
    this.perTenant = Math.max(1, Math.min(concurrency, perTenant ?? Math.ceil(concurrency / 2)));
  }

  get free(): number {
    return this.concurrency - this.#inFlight;
  }

  /** No slot free, or a tenant at its share: the next claim waits until work finishes. */
  get saturated(): boolean {
    return this.free <= 0 || this.fullTenants().length > 0;
  }

  /** How many more `tenant` may take. */
  room(tenant: string): number {
    return this.perTenant - (this.#busy.get(tenant) ?? 0);
  }

  fullTenants(): string[] {
    return [...this.#busy].filter(([, n]) => n >= this.perTenant).map(([tenant]) => tenant);
  }

  take(tenant: string): void {
    this.#inFlight++;
    this.#busy.set(tenant, (this.#busy.get(tenant) ?? 0) + 1);
  }

  release(tenant: string): void {
    this.#inFlight--;
    const left = this.#busy.get(tenant)! - 1;
    if (left === 0) this.#busy.delete(tenant);
    else this.#busy.set(tenant, left);
  }
}
