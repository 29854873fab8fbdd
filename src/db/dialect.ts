import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { UNICODE_LOWER, type Database, type Engine } from './connect.js';
import { groupCommitFor, type RunOptions } from './group-commit.js';
import { nameStatement } from './pg-adapter.js';
import type { DB } from './schema.js';

/**
 * The one place that writes SQL, and runs transactions, differently for SQLite and PostgreSQL.
 * Everything else in the code base is written once against Kysely and runs on both (eslint's
 * `layers/engine-branches-in-dialect` holds it to that).
 */

/** Shorter queries cannot use a trigram index; they fall back to LIKE (see docs/api.md, search). */
const TRIGRAM_MIN_LENGTH = 3;

function likePattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A case-insensitive substring match of `query` in any of `columns` of `table`, backed by the
 * index made by `createSubstringIndex` in the migrations: the FTS5 trigram table on SQLite,
 * trigram GIN indexes on PostgreSQL.
 */
export function substringMatch(engine: Engine, table: string, columns: string[], query: string): Expression<SqlBool> {
  const pattern = likePattern(query);
  if (engine === 'postgres') {
    return sql<SqlBool>`(${sql.join(
      columns.map((c) => sql`${sql.ref(`${table}.${c}`)} ilike ${pattern} escape '\\'`),
      sql` or `,
    )})`;
  }
  if ([...query].length >= TRIGRAM_MIN_LENGTH) {
    const phrase = `"${query.replace(/"/g, '""')}"`;
    const fts = sql.table(`${table}_fts`);
    return sql<SqlBool>`${sql.ref(`${table}.seq`)} in (select rowid from ${fts} where ${fts} match ${phrase})`;
  }
  // LIKE folds ASCII letters only; a query with other characters (`é` must find `É`, as on
  // PostgreSQL) compares Unicode-lowercased text instead. ASCII queries keep LIKE, the cheaper scan.
  if ([...query].every((c) => c.charCodeAt(0) < 0x80)) {
    return sql<SqlBool>`(${sql.join(
      columns.map((c) => sql`${sql.ref(`${table}.${c}`)} like ${pattern} escape '\\'`),
      sql` or `,
    )})`;
  }
  const lower = sql.raw(UNICODE_LOWER);
  const needle = query.toLowerCase();
  return sql<SqlBool>`(${sql.join(
    columns.map((c) => sql`instr(${lower}(${sql.ref(`${table}.${c}`)}), ${needle}) > 0`),
    sql` or `,
  )})`;
}

/**
 * The FROM item of a search that filters with `substringMatch`. On SQLite the planner prefers
 * walking the tenant's index in order and testing every row against the FTS match (cheap when
 * matches are common, a walk over the whole tenant when they are rare, which is the usual case
 * of "find this person"); `NOT INDEXED` leaves it only the plan that looks up the matching rows
 * by rowid, so the cost follows the number of matches, not the size of the tenant. The derived
 * table is flattened by SQLite and keeps the table's name, so the query reads as usual. (The
 * price: a query matching a large share of the tenant sorts all its matches.)
 */
export function searchSource<T extends string>(engine: Engine, table: T, query: string) {
  // Queries too short for the trigram index are LIKE scans: those need the tenant's index.
  return engine === 'sqlite' && [...query].length >= TRIGRAM_MIN_LENGTH
    ? sql`(select * from ${sql.table(table)} not indexed)`.as(table)
    : table;
}

/**
 * Row locks for read-modify-write. On SQLite every writing transaction already holds the
 * database's write lock from its first statement (`begin immediate`), so there is nothing to add.
 */
export function forUpdate<QB extends { forUpdate(): QB }>(engine: Engine, qb: QB): QB {
  return engine === 'postgres' ? qb.forUpdate() : qb;
}

/**
 * A shared row lock (PostgreSQL `for share`): waits for a writer holding the row and then reads
 * what it committed; readers do not wait for each other. SQLite: nothing to add (see forUpdate).
 */
export function forShare<QB extends { forShare(): QB }>(engine: Engine, qb: QB): QB {
  return engine === 'postgres' ? qb.forShare() : qb;
}

/**
 * Whether several writes can be one statement: a data-modifying `WITH` whose later parts read what
 * the earlier ones wrote. PostgreSQL has it, and there it pays: every statement is a round trip
 * (ADR 0006). SQLite has none, and no round trips to save: its callers write statement by statement.
 */
export function supportsDataModifyingWith(engine: Engine): boolean {
  return engine === 'postgres';
}

/**
 * Serializes the transactions that take the same `key` until they end (e.g. "the topics of tenant
 * X", so that two first topics cannot both become the default). PostgreSQL: a transaction-scoped
 * advisory lock; SQLite: the write lock taken by `begin immediate` already serializes writers.
 */
export async function lockKey(engine: Engine, db: Kysely<DB>, key: string): Promise<void> {
  if (engine === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
}

/** The larger of two values (`max(a, b)` on SQLite, `greatest(a, b)` on PostgreSQL; both skip NULL). */
export function greatest<T>(engine: Engine, a: Expression<T>, b: Expression<T> | T): RawBuilder<T> {
  return engine === 'postgres' ? sql<T>`greatest(${a}, ${b})` : sql<T>`max(${a}, ${b})`;
}

/**
 * A column that the query planner must not look up by index (SQLite's documented unary `+`). For a
 * join whose other side SQLite cannot estimate (a list of values): without it, SQLite may scan every
 * row of the tenant by the tenant's index and look each up in the list, instead of looking each
 * value up by primary key (docs/performance.md, "Collect on SQLite"). PostgreSQL plans with its
 * statistics: the column as it is.
 */
export function notByIndex(engine: Engine, column: string): RawBuilder<unknown> {
  return engine === 'sqlite' ? sql`+${sql.ref(column)}` : sql.ref(column);
}

/** A bound ISO timestamp as a value of the timestamp column type (text on SQLite, timestamptz on PostgreSQL). */
export function timestampValue(engine: Engine, iso: string): RawBuilder<string> {
  return engine === 'postgres' ? sql<string>`cast(${iso} as timestamptz)` : sql<string>`${iso}`;
}

/** A text value inside a JSON column, by key path (null when missing). */
export function jsonText(engine: Engine, column: Expression<unknown>, path: string[]): RawBuilder<string | null> {
  if (engine === 'postgres') return sql<string | null>`${column} #>> ${`{${path.join(',')}}`}`;
  return sql<string | null>`json_extract(${column}, ${`$.${path.join('.')}`})`;
}

/** Whether a JSON array column holds `value` as one of its elements (`@>` on PostgreSQL, `json_each` on SQLite). */
export function jsonArrayHolds(engine: Engine, column: Expression<unknown>, value: string): RawBuilder<SqlBool> {
  if (engine === 'postgres') return sql<SqlBool>`${column} @> ${JSON.stringify([value])}::jsonb`;
  return sql<SqlBool>`exists (select 1 from json_each(${column}) where json_each.value = ${value})`;
}

/**
 * Runs `work` in a transaction of its own. SQLite: concurrent transactions share one commit (group
 * commit, see group-commit.ts), each isolated in a savepoint, begun with `begin immediate` so that
 * writers queue for the lock instead of failing midway. PostgreSQL: a transaction on a pooled
 * connection (`options` are SQLite's: a PostgreSQL commit waits for its WAL flush without holding
 * the event loop).
 */
export function runTransaction<R>(
  engine: Engine,
  db: Kysely<DB>,
  work: (trx: Kysely<DB>) => Promise<R>,
  options?: RunOptions,
): Promise<R> {
  if (engine === 'sqlite') return groupCommitFor(db).run(work, options);
  return db.transaction().execute(work);
}

/**
 * How many independent write transactions a bulk writer (the audience import) should queue at
 * once. SQLite: several, so that group commit makes them one commit (each still in its own
 * savepoint) while the write lock is held for a few of them only. PostgreSQL: one, since the
 * import's transactions serialize on the page's row lock and each would hold a pool connection.
 */
export function bulkWriteConcurrency(engine: Engine): number {
  return engine === 'sqlite' ? 8 : 1;
}

/** How long a bulk writer on SQLite may go on taking the write lock before it pauses (see below). */
const BULK_WRITE_BURST_MS = 500;
/** Longer than the longest sleep of SQLite's busy handler (100 ms): a waiter wakes inside the pause. */
const BULK_WRITE_PAUSE_MS = 110;

/**
 * What a bulk writer awaits after each chunk it committed. PostgreSQL: one event-loop turn (row
 * locks queue fairly). SQLite: other connections (the workers' thread, another server process, the
 * CLI) wait for the write lock in SQLite's busy handler, which sleeps up to 100 ms between tries
 * and gives up after busy_timeout; a writer that takes the lock again at once after every commit
 * can starve them. So every 500 ms of writing it pauses 110 ms: every waiter gets its turn within
 * about 600 ms, for some 20 % of the writer's speed.
 */
export function bulkWriteYield(engine: Engine): () => Promise<void> {
  if (engine !== 'sqlite') return () => nextTurn();
  let burstStarted = performance.now();
  return async () => {
    if (performance.now() - burstStarted < BULK_WRITE_BURST_MS) return nextTurn();
    await sleep(BULK_WRITE_PAUSE_MS);
    burstStarted = performance.now();
  };
}

/**
 * How many visit events one transaction of the batched ingest writes
 * (modules/audience-sessions/audience-sessions.ingest.ts). SQLite: few, because better-sqlite3
 * runs a transaction from its first statement to its commit without yielding the event loop, so
 * a page request arriving meanwhile waits for all of it; a flush is cut into transactions of
 * about a millisecond each (docs/performance.md, "Collect on SQLite"), with an event-loop turn
 * between them (group commit's). PostgreSQL: the whole flush in one transaction, whose
 * statements wait on the network, not on the loop.
 */
export function ingestEventsPerTransaction(engine: Engine): number {
  return engine === 'sqlite' ? 50 : Number.POSITIVE_INFINITY;
}

/**
 * Marks the SQL of a hot query (db/prepared.ts) for a named statement on PostgreSQL, which then
 * plans it once per connection (db/pg-adapter.ts); SQLite's adapter caches prepared statements by
 * their text already.
 */
export function nameHotStatement(engine: Engine, text: string): void {
  if (engine === 'postgres') nameStatement(text);
}

/**
 * The schema Kysely's migration bookkeeping tables live in: on PostgreSQL the connection's own,
 * so that databases sharing a server (one schema each) stay apart; SQLite has no schemas.
 */
export async function migrationTableSchema(database: Database): Promise<string | undefined> {
  if (database.engine !== 'postgres') return undefined;
  return currentSchema(database.kysely);
}

/** The PostgreSQL connection's own schema (databases sharing a server have one each). */
async function currentSchema(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]!.schema;
}

/**
 * Claims rows that no other worker holds (`for update skip locked`, for a query written as raw
 * SQL); on SQLite the write lock already serializes workers.
 */
export function skipLockedClause(engine: Engine): RawBuilder<unknown> {
  return engine === 'postgres' ? sql` for update skip locked` : sql``;
}

/**
 * Whether processes other than this one may work on the database: several servers (or hosts)
 * share a PostgreSQL database; a SQLite file has one process (WEB_CONCURRENCY is PostgreSQL only).
 */
export function sharedAcrossProcesses(engine: Engine): boolean {
  return engine === 'postgres';
}

/**
 * How processes sharing the database tell each other something (workers/wakeups.ts): on
 * PostgreSQL a NOTIFY channel named `prefix` + the connection's schema (databases sharing a
 * server stay apart; at most 63 bytes, PostgreSQL's limit for a name) and the statement that
 * notifies it. Null where no other process shares the database.
 */
export async function notificationChannel(
  engine: Engine,
  db: Kysely<DB>,
  prefix: string,
): Promise<{ name: string; notify(payload: string): Promise<void> } | null> {
  if (!sharedAcrossProcesses(engine)) return null;
  const name = `${prefix}${await currentSchema(db)}`.slice(0, 63);
  return {
    name,
    notify: async (payload) => {
      await sql`select pg_notify(${name}, ${payload})`.execute(db);
    },
  };
}

/** A passage found by `rankedPassages`, best first. */
export interface RankedPassage {
  id: string;
  source_kind: string;
  source_id: string;
  label: string;
  body: string;
}

/** The words of a search as FTS5 strings (a word of letters and digits, quoted: never syntax). */
function ftsWords(terms: string[], operator: 'AND' | 'OR'): string {
  return terms.map((t) => `"${t.replace(/"/g, '')}"`).join(` ${operator} `);
}

/** The words of a search as PostgreSQL tsquery text (letters and digits only). */
function tsWords(terms: string[], operator: '&' | '|'): string {
  return terms
    .map((t) => t.replace(/[^\p{L}\p{N}]/gu, ''))
    .filter((t) => t !== '')
    .join(` ${operator} `);
}

/** Below this many matches in the whole index, SQLite ranks the agent's passages without the scope tokens. */
const UNSCOPED_RANK_MAX = 1000;

/** The FTS5 match of the agent's passages in `scopes` (their scope tokens), AND-ed with `words`. */
function scopedMatch(scopes: { token: string }[], words: string): string {
  return `scope_token : (${scopes.map((s) => `"${s.token}"`).join(' OR ')}) AND ${words}`;
}

/**
 * For each of `terms`, how many of the tenant's passages in `scopes` contain it, counted up to
 * `cap` (so a word found everywhere costs `cap` rows, not the tenant's size). The agent's
 * retrieval tells distinctive words from common ones by it (docs/agent.md, Retrieval). On SQLite
 * a count below `cap` is the whole index's (an upper bound: a word only other tenants use counts).
 */
export async function passageCountsPerTerm(
  engine: Engine,
  db: Kysely<DB>,
  query: { tenantId: string; scopes: { key: string; token: string }[]; terms: string[]; cap: number },
): Promise<number[]> {
  if (query.terms.length === 0 || query.scopes.length === 0) return query.terms.map(() => 0);
  if (engine === 'sqlite') {
    // Counted in the whole index first (no scope: the cheaper match); only a word found in `cap`
    // passages there is counted again in the scopes (their tokens name the tenant's passages).
    const count = (match: string) =>
      sql<number>`(select count(*) from (
        select rowid from agent_passages_fts where agent_passages_fts match ${match} limit ${query.cap}))`;
    const counts = query.terms.map((term) => {
      const words = `{label body} : (${ftsWords([term], 'OR')})`;
      return sql<number>`(select case when everywhere < ${query.cap} then everywhere
        else ${count(scopedMatch(query.scopes, words))} end
        from (select ${count(words)} as everywhere))`;
    });
    const { rows } = await sql<{ counts: string }>`select json_array(${sql.join(counts)}) as counts`.execute(db);
    return JSON.parse(rows[0]!.counts) as number[];
  }
  const { rows } = await sql<{ n: number }>`
    select (select count(*) from (
      select 1 from agent_passages p
      where p.tenant_id = ${query.tenantId}
        and p.scope_key in (${sql.join(query.scopes.map((s) => s.key))})
        and p.document @@ to_tsquery('english', w.term)
      limit ${query.cap}) s)::int as n
    from unnest(${query.terms.map((t) => tsWords([t], '|'))}::text[]) with ordinality as w(term, i)
    order by w.i`.execute(db);
  return rows.map((r) => r.n);
}

/**
 * The on-page agent's retrieval (docs/agent.md, Retrieval): the tenant's passages in one of
 * `scopes` that contain any (or, with `all`, every) word of `match`, ranked by the words of
 * `rankBy` (a superset of `match`), best first. With `firstOf`, only the first that many matching
 * passages in the index's order are ranked (a bound on the work for words found everywhere).
 * SQLite: the FTS5 table, its match limited to the scopes' tokens, ranked by bm25 (the label
 * weighs twice the body, the scope token nothing). PostgreSQL: the stored tsvector (english) under
 * its GIN index, ranked by ts_rank (the body weighs more than the label, weights A and B).
 */
export async function rankedPassages(
  engine: Engine,
  db: Kysely<DB>,
  query: {
    tenantId: string;
    scopes: { key: string; token: string }[];
    match: { terms: string[]; all: boolean };
    rankBy: string[];
    firstOf?: number;
    limit: number;
  },
): Promise<RankedPassage[]> {
  const { match, rankBy } = query;
  if (match.terms.length === 0 || query.scopes.length === 0) return [];
  // Ranking words beyond the match's: a further condition that every matching passage meets (it
  // holds a word of the match), there for the rank only.
  const extra = rankBy.some((t) => !match.terms.includes(t));
  if (engine === 'sqlite') {
    const words = `{label body} : (${ftsWords(match.terms, match.all ? 'AND' : 'OR')})`;
    const rankedWords = extra ? `${words} AND {label body} : (${ftsWords(rankBy, 'OR')})` : words;
    const matching = scopedMatch(query.scopes, words);
    const ranked = scopedMatch(query.scopes, rankedWords);
    // Only the first `firstOf` matches: those up to the rowid of the last of them.
    const bound =
      query.firstOf === undefined
        ? sql``
        : sql`and rowid <= coalesce((select rowid from agent_passages_fts where agent_passages_fts match ${matching}
            order by rowid limit 1 offset ${query.firstOf - 1}), 9223372036854775807)`;
    if (query.firstOf === undefined) {
      // Words found in few passages of the whole index: ranked there, without the scope tokens,
      // and the tenant's rows kept after. The same ranking (the scope column weighs nothing), but
      // bm25 reads the whole list of every token it ranks by, the tenant's scope token included.
      const { rows: few } = await sql<{ n: number }>`select count(*) as n from (
        select rowid from agent_passages_fts where agent_passages_fts match ${words} limit ${UNSCOPED_RANK_MAX})`.execute(
        db,
      );
      if (few[0]!.n < UNSCOPED_RANK_MAX) {
        // Materialized and cross-joined: driven by the few matches, not by the tenant's passages.
        const { rows } = await sql<RankedPassage>`
          with f as materialized (
            select rowid, bm25(agent_passages_fts, 0.0, 2.0, 1.0) as score
            from agent_passages_fts where agent_passages_fts match ${rankedWords}
          )
          select p.id, p.source_kind, p.source_id, p.label, p.body
          from f cross join agent_passages p on p.seq = f.rowid
          where p.tenant_id = ${query.tenantId} and p.scope_key in (${sql.join(query.scopes.map((s) => s.key))})
          order by f.score, p.seq
          limit ${query.limit}`.execute(db);
        return rows;
      }
    }
    // The full-text match first, ranked and cut, then the rows: written as one join, SQLite's
    // planner may walk the tenant's passages and evaluate the match once per row (150 ms at
    // 1,000 entries instead of 0.6 ms). A subquery with a LIMIT is never flattened into a join.
    const { rows } = await sql<RankedPassage>`
      select p.id, p.source_kind, p.source_id, p.label, p.body
      from (
        select rowid, bm25(agent_passages_fts, 0.0, 2.0, 1.0) as score
        from agent_passages_fts where agent_passages_fts match ${ranked} ${bound}
        order by score, rowid limit ${query.limit}
      ) f join agent_passages p on p.seq = f.rowid
      where p.tenant_id = ${query.tenantId}
      order by f.score, p.seq`.execute(db);
    return rows;
  }
  const matching = tsWords(match.terms, match.all ? '&' : '|');
  const ranking = tsWords(rankBy, '|');
  if (matching === '' || ranking === '') return [];
  const candidates = sql`
    select p.id, p.source_kind, p.source_id, p.label, p.body, p.document
    from agent_passages p
    where p.tenant_id = ${query.tenantId}
      and p.scope_key in (${sql.join(query.scopes.map((s) => s.key))})
      and p.document @@ to_tsquery('english', ${matching})
    ${query.firstOf === undefined ? sql`` : sql`limit ${query.firstOf}`}`;
  const { rows } = await sql<RankedPassage>`
    select c.id, c.source_kind, c.source_id, c.label, c.body
    from (${candidates}) c, to_tsquery('english', ${ranking}) q
    order by ts_rank(c.document, q) desc, c.id
    limit ${query.limit}`.execute(db);
  return rows;
}
