import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/schema.js';
import type { AppContext } from '../../http/context.js';
import { domainsStamp, verifiedHostnames } from './tenant-domains.queries.js';

/** How often every process checks the database for domains added or removed elsewhere. */
const HOSTS_REFRESH_MS = 1_000;
/** A full reload even when nothing seems to have changed. */
const FULL_RELOAD_MS = 60_000;

/**
 * The verified tenant host names (and their tenants), in memory, so that the router can tell a
 * page request from an API request synchronously (it cannot wait for the database), and the TLS
 * `ask` endpoint can answer without a query. This process updates it at once when it verifies or
 * removes a domain; changes made elsewhere (the CLI, the verification job, other servers on
 * PostgreSQL) arrive within `HOSTS_REFRESH_MS`, from a cheap stamp query that reloads the names
 * only when one started or stopped serving. Being in this set only sends a request to the page
 * side: serving still checks the verified domain and link rows, so a removed domain stops serving
 * at once everywhere.
 */
export class PageHosts {
  /** host name → tenant id */
  #hosts = new Map<string, string>();
  #stamp = '';
  #loadedAt = 0;
  #timer: NodeJS.Timeout | null = null;
  #refreshing: Promise<void> | null = null;

  constructor(
    readonly db: Kysely<DB>,
    private readonly logger?: Logger,
  ) {}

  has(hostname: string): boolean {
    return this.#hosts.has(hostname);
  }

  /** The tenant a host serves, as last known here (serving checks the live row as well). */
  tenantOf(hostname: string): string | undefined {
    return this.#hosts.get(hostname);
  }

  add(hostname: string, tenantId: string): void {
    this.#hosts.set(hostname, tenantId);
  }

  remove(hostname: string): void {
    this.#hosts.delete(hostname);
  }

  /** Reloads the names if the stamp moved (or a minute passed). */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = null));
    return this.#refreshing;
  }

  async #refresh() {
    const stamp = await domainsStamp(this.db);
    const now = Date.now();
    if (stamp === this.#stamp && now - this.#loadedAt < FULL_RELOAD_MS) return;
    this.#hosts = new Map((await verifiedHostnames(this.db)).map((d) => [d.hostname, d.tenant_id]));
    this.#stamp = stamp;
    this.#loadedAt = now;
  }

  async start(): Promise<void> {
    await this.refresh();
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      this.refresh().catch((err: unknown) => this.logger?.warn({ err }, 'refreshing tenant host names failed'));
    }, HOSTS_REFRESH_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#refreshing?.catch(() => {});
  }
}

const registries = new WeakMap<AppContext, PageHosts>();

/** The one registry of an app (its page router and its domain routes share it). */
export function pageHostsFor(ctx: AppContext): PageHosts {
  let hosts = registries.get(ctx);
  if (hosts === undefined) registries.set(ctx, (hosts = new PageHosts(ctx.database.kysely, ctx.logger)));
  return hosts;
}
