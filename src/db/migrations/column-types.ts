import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * Column types shared by the migrations. Migrations are frozen in time: change nothing here that
 * an existing migration uses; add a new helper instead.
 */
export interface ColumnTypes {
  timestamp: RawBuilder<unknown>;
  json: RawBuilder<unknown>;
  boolean: RawBuilder<unknown>;
  bigint: RawBuilder<unknown>;
  /** The same types as SQL text, for `create table` statements written out by hand. */
  names: { timestamp: string; json: string; boolean: string; bigint: string };
}

export function columnTypes(engine: Engine): ColumnTypes {
  const names =
    engine === 'sqlite'
      ? { timestamp: 'text', json: 'JSON_TEXT', boolean: 'BOOLEAN', bigint: 'integer' }
      : { timestamp: 'timestamptz', json: 'jsonb', boolean: 'boolean', bigint: 'bigint' };
  return {
    timestamp: sql.raw(names.timestamp),
    json: sql.raw(names.json),
    boolean: sql.raw(names.boolean),
    bigint: sql.raw(names.bigint),
    names,
  };
}

/**
 * What a migration may need from outside the database. Handed in by the caller, so migrations
 * still import no application code.
 */
export interface MigrationContext {
  /**
   * Opens a webhook secret sealed in the `v1` format (no associated data) and seals it again bound
   * to its subscription id. Absent where no key is at hand (a fresh database needs none).
   */
  resealWebhookSecret?: (sealed: string, subscriptionId: string) => string;
}

export interface Migration {
  up(db: Kysely<any>, engine: Engine, context: MigrationContext): Promise<void>;
}

/**
 * A case-insensitive substring index over text columns of a table (the search of pages,
 * persons, accounts): an FTS5 trigram table kept in step by triggers on SQLite (the table needs
 * an INTEGER PRIMARY KEY `seq` so that rowids survive VACUUM), trigram GIN indexes on PostgreSQL.
 */
export async function createSubstringIndex(
  db: Kysely<any>,
  engine: Engine,
  table: string,
  columns: string[],
): Promise<void> {
  if (engine === 'postgres') {
    for (const column of columns) {
      await sql.raw(`create index ${table}_${column}_trgm on ${table} using gin (${column} gin_trgm_ops)`).execute(db);
    }
    return;
  }
  const fts = `${table}_fts`;
  const cols = columns.join(', ');
  const newValues = columns.map((c) => `new.${c}`).join(', ');
  const oldValues = columns.map((c) => `old.${c}`).join(', ');
  await sql
    .raw(`create virtual table ${fts} using fts5(${cols}, content='${table}', content_rowid='seq', tokenize='trigram')`)
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_fts_insert after insert on ${table} begin
         insert into ${fts}(rowid, ${cols}) values (new.seq, ${newValues});
       end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_fts_delete after delete on ${table} begin
         insert into ${fts}(${fts}, rowid, ${cols}) values ('delete', old.seq, ${oldValues});
       end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_fts_update after update of ${cols} on ${table} begin
         insert into ${fts}(${fts}, rowid, ${cols}) values ('delete', old.seq, ${oldValues});
         insert into ${fts}(rowid, ${cols}) values (new.seq, ${newValues});
       end`,
    )
    .execute(db);
}

/** The primary key of a table with a prefixed text id; searchable tables on SQLite also get `seq`. */
export function idColumns(engine: Engine, searchable: boolean): string {
  return engine === 'sqlite' && searchable ? 'seq integer primary key, id text not null unique' : 'id text primary key';
}
