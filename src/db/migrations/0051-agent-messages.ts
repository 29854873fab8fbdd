import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The on-page agent's conversations (issue 25, docs/agent.md): each question and each answer of a
 * visit, with the answer's sources, listed oldest first per audience session
 * (`position`: 0, 1, 2… within the session).
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('agent_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('sources', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_messages_session')
    .on('agent_messages')
    .columns(['tenant_id', 'session_id', 'position'])
    .execute();
}
