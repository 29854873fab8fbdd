import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The daily token ledger of language-model calls (src/llm/token-budget.ts): one row per tenant and
 * UTC day, with the tokens the provider reported (`used_tokens`), the estimates of calls still in
 * flight (`reserved_tokens`) and the calls made. Every provider call of the service, generation's
 * and the on-page agent's alike, reserves here first and records here after.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('llm_token_days')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used_tokens', t.bigint, (c) => c.notNull())
    .addColumn('reserved_tokens', t.bigint, (c) => c.notNull())
    .addColumn('calls', t.bigint, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('llm_token_days_pk', ['tenant_id', 'day'])
    .execute();
}
