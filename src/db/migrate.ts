import { Migrator, type MigrationResultSet } from 'kysely';
import type { Database } from './connect.js';
import { migrationTableSchema } from './dialect.js';
import type { MigrationContext } from './migrations/column-types.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date (or, for a migration's own test, up to `upTo` included). Kysely's
 * migrator locks, so concurrent starts are safe. The service and the CLI pass the context (the
 * secret key); tests on fresh databases need none.
 */
export async function migrateToLatest(
  database: Database,
  context: MigrationContext = {},
  options: { upTo?: string } = {},
): Promise<string[]> {
  const migrator = new Migrator({
    db: database.kysely,
    // Kysely looks for its bookkeeping tables in any schema unless told which.
    migrationTableSchema: await migrationTableSchema(database),
    // Features are built on branches in parallel, each taking its own block of migration numbers,
    // so a database may have run 0030 before 0018 reaches it. Every migration is independent of
    // the ones numbered after it (each only adds), so running one that arrives late is safe.
    allowUnorderedMigrations: true,
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          Object.entries(migrations).map(([name, migration]) => [
            name,
            { up: (db) => migration.up(db, database.engine, context) },
          ]),
        ),
    },
  });
  const result: MigrationResultSet =
    options.upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(options.upTo);
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`Migration ${failed ?? ''} failed: ${String((result.error as Error).message ?? result.error)}`, {
      cause: result.error,
    });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
