import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Engine } from '../db/connect.js';
import { skipLockedClause } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import type { TenantSlots } from './tenant-slots.js';

/**
 * A table that is a queue of tenants' work (webhook deliveries, leased jobs). It needs an index on
 * (tenant_id, due) over the rows in `statuses` — a partial index with that very predicate, or one
 * led by `status` — for the loose index scan below.
 */
export interface TenantQueue {
  table: keyof DB & string;
  /** The key column. */
  key: string;
  /** Statuses of the rows in the queue, written as literals so that the planner sees the index's predicate. */
  statuses: readonly string[];
  /** The column that says when a row is due. */
  due: string;
}

/**
 * Takes a queue's due rows fairly across tenants: the tenants with due rows are taken round-robin
 * (in tenant-id order, starting after the last one served, at most `limit` of them per claim),
 * each gets an equal share of the batch, what a tenant with fewer due rows leaves over goes to the
 * others, and each share is that tenant's oldest due rows. So one tenant's backlog delays another
 * tenant's work by at most ⌈tenants with due work / limit⌉ claims, never by its own length. Given
 * the worker's `slots`, no tenant goes past its share of them. One instance per worker (it holds
 * the round-robin cursor); rows are locked (PostgreSQL: skipped by concurrent claims) until the
 * caller's transaction ends.
 */
export class FairClaim<Row extends { tenant_id: string }> {
  readonly #queue: TenantQueue;
  readonly #columns: readonly string[];
  /** The last tenant served: the next claim starts after it. */
  #cursor = '';

  /** `columns`: what to read of each row (its key and tenant_id among them). */
  constructor(queue: TenantQueue, columns: readonly string[]) {
    this.#queue = queue;
    this.#columns = columns;
  }

  async take(trx: Kysely<DB>, engine: Engine, nowIso: string, limit: number, slots?: TenantSlots): Promise<Row[]> {
    if (limit <= 0) return [];
    const full = slots?.fullTenants() ?? [];
    const tenants = (await this.#dueTenants(trx, nowIso, limit + full.length))
      .filter((t) => !full.includes(t))
      .slice(0, limit);
    if (tenants.length === 0) return [];
    const rows: Row[] = [];
    const taken = new Map<string, string[]>();
    const take = async (tenant: string, room: number) => {
      const keys = taken.get(tenant) ?? [];
      const got = await this.#dueRows(trx, engine, tenant, nowIso, room, keys);
      rows.push(...got);
      taken.set(tenant, [...keys, ...got.map((r) => String((r as Record<string, unknown>)[this.#queue.key]))]);
      return got.length === room;
    };
    const cap = (tenant: string) => (slots ? slots.room(tenant) - (taken.get(tenant)?.length ?? 0) : Infinity);
    const room = (tenant: string, n: number) => Math.min(n, limit - rows.length, cap(tenant));
    const share = Math.ceil(limit / tenants.length);
    const more: string[] = [];
    for (const tenant of tenants) {
      const n = room(tenant, share);
      if (n > 0 && (await take(tenant, n))) more.push(tenant);
    }
    for (const tenant of more) {
      const n = room(tenant, limit);
      if (n > 0) await take(tenant, n);
    }
    this.#cursor = tenants[tenants.length - 1]!;
    return rows;
  }

  /** Rows in `status` whose due time has not come yet: for a leased job, the running ones' leases. */
  async countNotDue(trx: Kysely<DB>, status: string, nowIso: string): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(this.#queue.table)} q
       where ${this.#queued('q')} and q.status = ${status} and ${sql.ref(`q.${this.#queue.due}`)} > ${nowIso}`.execute(
      trx,
    );
    return Number(rows[0]!.n);
  }

  /** The queue's predicate on `status` of the table aliased `alias`. */
  #queued(alias: string): RawBuilder<SqlBool> {
    const status = sql.ref(`${alias}.status`);
    const [only, ...others] = this.#queue.statuses;
    return others.length === 0
      ? sql<SqlBool>`${status} = ${sql.lit(only)}`
      : sql<SqlBool>`${status} in (${sql.join(this.#queue.statuses.map((s) => sql.lit(s)))})`;
  }

  /**
   * Up to `max` tenants with a due row, in tenant-id order from just after the cursor, wrapping
   * around. A loose index scan: one seek per tenant with queued rows to find the next tenant, one
   * to read its earliest due time; the cost follows the number of tenants, not of rows.
   */
  async #dueTenants(trx: Kysely<DB>, nowIso: string, max: number): Promise<string[]> {
    const table = sql.table(this.#queue.table);
    const due = sql.ref(`q.${this.#queue.due}`);
    const after = async (cursor: string, n: number) => {
      const { rows } = await sql<{ tenant_id: string }>`
        with recursive queued_tenant(tenant_id) as (
          select (select min(q.tenant_id) from ${table} q where ${this.#queued('q')} and q.tenant_id > ${cursor})
          union all
          select (select min(q.tenant_id) from ${table} q where ${this.#queued('q')} and q.tenant_id > p.tenant_id)
            from queued_tenant p where p.tenant_id is not null
        )
        select p.tenant_id from queued_tenant p
         where p.tenant_id is not null
           and (select min(${due}) from ${table} q where ${this.#queued('q')} and q.tenant_id = p.tenant_id) <= ${nowIso}
         limit ${n}`.execute(trx);
      return rows.map((r) => r.tenant_id);
    };
    const found = await after(this.#cursor, max);
    if (found.length < max && this.#cursor !== '') {
      for (const tenant of await after('', max - found.length)) {
        if (tenant > this.#cursor || found.includes(tenant)) break;
        found.push(tenant);
      }
    }
    return found;
  }

  /** A tenant's oldest due rows, leaving out `taken` (PostgreSQL does not skip a claim's own locks). */
  async #dueRows(
    trx: Kysely<DB>,
    engine: Engine,
    tenant: string,
    nowIso: string,
    limit: number,
    taken: string[],
  ): Promise<Row[]> {
    const { key, due } = this.#queue;
    const notTaken = taken.length === 0 ? sql`` : sql` and ${sql.ref(`q.${key}`)} not in (${sql.join(taken)})`;
    const { rows } = await sql<Row>`
      select ${sql.join(this.#columns.map((c) => sql.ref(`q.${c}`)))}
        from ${sql.table(this.#queue.table)} q
       where ${this.#queued('q')} and q.tenant_id = ${tenant} and ${sql.ref(`q.${due}`)} <= ${nowIso}${notTaken}
       order by ${sql.ref(`q.${due}`)}
       limit ${limit}${skipLockedClause(engine)}`.execute(trx);
    return rows;
  }
}
