import { Migrator, sql, type MigrationResultSet } from 'kysely';
import type { Database } from './connect.js';
import { migrations } from './migrations/index.js';

/** Brings the schema up to date. Kysely's migrator locks, so concurrent starts are safe. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on a server
  // with several schemas (the parallel PostgreSQL tests) it would find another schema's tables.
  const migrationTableSchema =
    database.engine === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.kysely)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: database.kysely,
    migrationTableSchema,
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          Object.entries(migrations).map(([name, migration]) => [
            name,
            { up: (db) => migration.up(db, database.engine) },
          ]),
        ),
    },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`Migration ${failed ?? ''} failed: ${String((result.error as Error).message ?? result.error)}`, {
      cause: result.error,
    });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
