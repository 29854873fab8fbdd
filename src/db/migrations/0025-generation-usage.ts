import type { Kysely } from 'kysely';

/**
 * What made each version and what it cost (docs/audience-versions.md#what-is-stored): the
 * generator, the model, the tokens the provider reported over every call made for the version
 * (attempts and repairs included), and how long the successful attempt took. Null on versions
 * made before (and, for model and tokens, on versions the built-in writer made).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite adds one column per ALTER TABLE.
  await db.schema.alterTable('audience_versions').addColumn('generator', 'text').execute();
  await db.schema.alterTable('audience_versions').addColumn('model', 'text').execute();
  await db.schema.alterTable('audience_versions').addColumn('input_tokens', 'integer').execute();
  await db.schema.alterTable('audience_versions').addColumn('output_tokens', 'integer').execute();
  await db.schema.alterTable('audience_versions').addColumn('generation_ms', 'integer').execute();
}
