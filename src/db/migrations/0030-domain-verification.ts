import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Proven tenant domains (issue 26). A domain is a *claim* until its tenant proves it with a DNS TXT
 * record: several tenants may claim one host name, at most one holds it verified. The row also
 * carries the schedule of its background checks (retries of a pending claim, re-checks of a
 * verified one), for the leased-job runner.
 *
 * Existing live domains were taken without proof. They stay verified (their pages keep serving)
 * but are marked as missing their proof since now and due for a check at once: unless their
 * tenant publishes the record, the first re-checks end their verification after the grace period,
 * exactly like a verified domain whose record disappeared. `*.localhost` names need no proof.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  // One statement per column: SQLite adds one column per `alter table`.
  const table = () => db.schema.alterTable('tenant_domains');
  await table()
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('verified'))
    .execute();
  await table()
    .addColumn('verification_token', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await table().addColumn('verified_at', t.timestamp).execute();
  await table().addColumn('checked_at', t.timestamp).execute();
  await table().addColumn('check_result', 'text').execute();
  await table().addColumn('check_detail', 'text').execute();
  await table().addColumn('proof_missing_since', t.timestamp).execute();
  await table().addColumn('pending_until', t.timestamp).execute();
  await table().addColumn('next_check_at', t.timestamp).execute();
  await table()
    .addColumn('check_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await table().addColumn('check_lease_token', 'text').execute();
  await table()
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  const now = new Date().toISOString();
  const rows: { id: string; hostname: string; created_at: string; deleted_at: string | null }[] = await db
    .selectFrom('tenant_domains')
    .select(['id', 'hostname', 'created_at', 'deleted_at'])
    .execute();
  for (const row of rows) {
    const local = row.hostname === 'localhost' || row.hostname.endsWith('.localhost');
    const unproven = row.deleted_at === null && !local;
    await db
      .updateTable('tenant_domains')
      .set({
        verification_token: randomBytes(16).toString('hex'),
        verified_at: local ? row.created_at : null,
        proof_missing_since: unproven ? now : null,
        next_check_at: unproven ? now : null,
      })
      .where('id', '=', row.id)
      .execute();
  }

  // One verified holder per host name; one live claim per tenant and host name.
  await db.schema.dropIndex('tenant_domains_live_hostname').execute();
  await db.schema
    .createIndex('tenant_domains_verified_hostname')
    .on('tenant_domains')
    .column('hostname')
    .unique()
    .where(sql.ref('status'), '=', sql.lit('verified'))
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('tenant_domains_live_claim')
    .on('tenant_domains')
    .columns(['tenant_id', 'hostname'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // Every live claim on a host name: the winner's proof ends the others.
  await db.schema
    .createIndex('tenant_domains_live_hostname_claims')
    .on('tenant_domains')
    .column('hostname')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // The checks that are due (the job's queue).
  await db.schema
    .createIndex('tenant_domains_due_checks')
    .on('tenant_domains')
    .column('next_check_at')
    .where(sql.ref('next_check_at'), 'is not', null)
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
}
