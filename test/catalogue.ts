import { sql } from 'kysely';
import type { Database } from '../src/db/connect.js';
import { ENGINE } from './harness.js';

/** The database's own list of tables and their columns (sqlite_master / information_schema), not db/schema.ts. */
export async function catalogue(database: Database): Promise<Map<string, string[]>> {
  const db = database.kysely;
  const tables = new Map<string, string[]>();
  if (ENGINE === 'postgres') {
    const rows = await sql<{ table_name: string; column_name: string }>`
      select c.table_name, c.column_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      order by c.table_name, c.ordinal_position`.execute(db);
    for (const r of rows.rows) tables.set(r.table_name, [...(tables.get(r.table_name) ?? []), r.column_name]);
    return tables;
  }
  const names = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(db);
  for (const { name } of names.rows) {
    const columns = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db);
    tables.set(
      name,
      columns.rows.map((c) => c.name),
    );
  }
  return tables;
}

/** Every row of every table, as JSON text: to look for a value anywhere in the database. */
export async function everyRow(database: Database): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const table of (await catalogue(database)).keys()) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(database.kysely);
    out.set(
      table,
      rows.rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : v))),
    );
  }
  return out;
}
