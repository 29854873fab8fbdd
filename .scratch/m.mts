import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { sql } from 'kysely';
import fs from 'node:fs';
fs.rmSync('/tmp/i22mig/x.sqlite', { force: true });
const db = connectDatabase({ databaseUrl: null, sqliteFile: '/tmp/i22mig/x.sqlite' });
await migrateToLatest(db);
const r = await sql`select name, sql from sqlite_master where type='index' and (name like '%runnable%' or name like '%due%')`.execute(db.kysely);
console.log(r.rows);
for (const q of [
  sql`explain query plan select (select min(q.tenant_id) from audience_versions q where q.status in ('queued','pending','processing') and q.tenant_id > 'x')`,
  sql`explain query plan select min(q.available_at) from enrichment_jobs q where q.status in ('queued','processing') and q.tenant_id = 'x'`,
  sql`explain query plan select q.id from audience_versions q where q.status in ('queued','pending','processing') and q.tenant_id = 'x' and q.available_at <= 'z' order by q.available_at limit 3`,
  sql`explain query plan select (select min(q.tenant_id) from webhook_deliveries q where q.status = 'pending' and q.tenant_id > 'x')`,
]) console.log((await q.execute(db.kysely)).rows);
await db.close();
