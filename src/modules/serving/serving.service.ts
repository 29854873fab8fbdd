import type { Logger } from 'pino';
import type { Database } from '../../db/connect.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { allRevisions, bumpRevision, revisionsStamp } from './serving.queries.js';

/** The after-commit channel of a tenant's serving change: `serving:<tenant id>`. */
const CHANNEL_PREFIX = 'serving:';
/** How often each process compares the tenants' counters (changes made by other processes). */
const CHECK_INTERVAL_MS = 500;

/**
 * **The** hook of the page cache (issue 27): what the tenant's hosts serve changed. Call it in the
 * transaction of every change that alters what a host and path answer: a version published or
 * retired, a link created, moved, retargeted or deleted, a page archived, restored or deleted, an
 * audience archived or restored (or its route key changed), a domain verified, superseded, expired
 * or deleted. It bumps the tenant's counter in `serving_revisions` in that transaction and, once
 * it has committed, tells this process at once (so the **next** request here sees the change);
 * every other process sees the counter move within `CHECK_INTERVAL_MS`. A rolled-back transaction
 * changes nothing. Calling it for a change that alters nothing served only costs a cache miss.
 */
export async function servingChanged(scope: TenantScope): Promise<void> {
  await bumpRevision(scope);
  scope.afterCommit(`${CHANNEL_PREFIX}${scope.tenantId}`);
}

/**
 * What one process knows of the tenants' serving changes: a generation that grows with every
 * change seen (this process's commits at once, other processes' within `CHECK_INTERVAL_MS`), and
 * the generation of each tenant's last change. Something cached for a tenant is current while
 * the tenant has not changed since the generation read *before* its data was read (`current`).
 */
export class ServingRevisions {
  #generation = 0;
  readonly #changedAt = new Map<string, number>();
  #known: Map<string, number> | null = null;
  #stamp = '';
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  #disconnect: (() => void) | null = null;

  constructor(
    private readonly database: Pick<Database, 'kysely' | 'wakeups'>,
    private readonly logger?: Logger,
  ) {}

  /** Read before reading what is about to be cached; pass it to `current` later. */
  get generation(): number {
    return this.#generation;
  }

  /** Whether what was cached for `tenantId` at `generation` still holds. */
  current(tenantId: string, generation: number): boolean {
    return (this.#changedAt.get(tenantId) ?? 0) <= generation;
  }

  /** The tenant's hosts serve something else from now on. */
  changed(tenantId: string): void {
    this.#generation += 1;
    this.#changedAt.set(tenantId, this.#generation);
  }

  /** Compares the counters with the database when their stamp moved (`CHECK_INTERVAL_MS` apart). */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #check() {
    const { kysely } = this.database;
    const stamp = await revisionsStamp(kysely);
    if (stamp === this.#stamp && this.#known !== null) return;
    const rows = await allRevisions(kysely);
    const known = new Map(rows.map((r) => [r.tenant_id, Number(r.revision)]));
    if (this.#known !== null) {
      for (const [tenantId, revision] of known) if (this.#known.get(tenantId) !== revision) this.changed(tenantId);
    }
    this.#known = known;
    this.#stamp = stamp;
  }

  /** Listens to this process's commits and starts comparing counters. */
  async start(): Promise<void> {
    this.#disconnect ??= this.database.wakeups.connect((channel) => {
      if (channel.startsWith(CHANNEL_PREFIX)) this.changed(channel.slice(CHANNEL_PREFIX.length));
    });
    await this.check();
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      this.check().catch((err: unknown) => this.logger?.warn({ err }, 'checking the serving revisions failed'));
    }, CHECK_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#disconnect?.();
    this.#disconnect = null;
    await this.#checking?.catch(() => {});
  }
}
