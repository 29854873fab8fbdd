import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * The console's people (issue 28): users of one tenant each, their one-time sign-in links and
 * their server-side sessions. Links and sessions are stored by the SHA-256 of their secret only.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);

  await db.schema
    .createTable('console_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_sign_in_at', t.timestamp)
    .execute();
  // One user per e-mail address within a tenant (the address is stored lower-cased).
  await db.schema
    .createIndex('console_users_email')
    .on('console_users')
    .columns(['tenant_id', 'email'])
    .unique()
    .execute();

  await db.schema
    .createTable('console_sign_in_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('used_at', t.timestamp)
    .execute();

  await db.schema
    .createTable('console_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_seen_at', t.timestamp, (c) => c.notNull())
    .addColumn('ended_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('console_sessions_user')
    .on('console_sessions')
    .columns(['user_id'])
    .where(sql.ref('ended_at'), 'is', null)
    .execute();
}
