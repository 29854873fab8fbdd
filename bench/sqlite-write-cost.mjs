#!/usr/bin/env node
// What SQLite itself costs per person-log write for a new person, statement by statement, with
// nothing of the service around it: the service's schema (migrated), its pragmas (WAL,
// synchronous=FULL), its group commit's shape (one `begin immediate … commit` around 50 writes,
// each in its own savepoint) and the statements a write runs. Run after `npm run build`:
//   node bench/sqlite-write-cost.mjs [all|no-savepoints|no-search-index|synchronous-off]
// The variants show what each of those costs; only `all` is what the service does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { connectDatabase } from '../dist/db/connect.js';
import { migrateToLatest } from '../dist/db/migrate.js';

const variant = process.argv[2] ?? 'all';
const WRITES = 40_000;
const BATCH = 50;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-write-cost-'));
const file = path.join(dir, 'bench.sqlite');
const migrated = connectDatabase({ databaseUrl: null, sqliteFile: file });
await migrateToLatest(migrated);
await migrated.close();

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma(variant === 'synchronous-off' ? 'synchronous = OFF' : 'synchronous = FULL');
db.pragma('foreign_keys = ON');
if (variant === 'no-search-index')
  for (const op of ['insert', 'delete', 'update']) db.exec(`drop trigger persons_fts_${op}`);
const savepoints = variant !== 'no-savepoints';

const now = new Date().toISOString();
db.prepare(`insert into tenants (id, name, created_at) values ('tenant_1', 'Bench', ?)`).run(now);
const insertAccount = db.prepare(
  `insert into accounts (id, tenant_id, domain, name, created_at, updated_at) values (?, 'tenant_1', ?, null, ?, ?)`,
);
for (let i = 0; i < 50; i++) insertAccount.run(`account_${i}`, `d${i}.example`, now, now);

const insertPerson = db.prepare(
  `insert into persons (tenant_id, id, name, email, email_normalized, domain, phone_number, social_profile_url,
     social_profile_normalized, slug, account_domain, created_at, updated_at)
   values (?, ?, ?, ?, ?, null, null, null, null, ?, ?, ?, ?) on conflict do nothing returning id`,
);
const insertLog = db.prepare(
  `insert into person_logs (tenant_id, id, person_id, source, type, payload, created_at) values (?, ?, ?, ?, ?, ?, ?)`,
);
const moveActivity = db.prepare(
  `update accounts set latest_activity_at = ? where tenant_id = ? and domain = ?
     and (latest_activity_at is null or latest_activity_at < ?)`,
);

const spent = { person: 0n, log: 0n, account: 0n, savepoints: 0n, 'begin + commit': 0n };
const clock = process.hrtime.bigint;
for (let i = 0; i < WRITES; i += BATCH) {
  let t = clock();
  db.exec('begin immediate');
  spent['begin + commit'] += clock() - t;
  for (let j = i; j < i + BATCH; j++) {
    const at = new Date(Date.now() + j).toISOString();
    const domain = `d${j % 50}.example`;
    const email = `fresh.${j}@${domain}`;
    const id = `person_${String(j).padStart(26, '0')}`;
    if (savepoints) {
      t = clock();
      db.exec('savepoint group_commit');
      spent.savepoints += clock() - t;
    }
    t = clock();
    insertPerson.all('tenant_1', id, `Fresh Person ${j}`, email, email, `fresh-person-${j}`, domain, at, at);
    spent.person += clock() - t;
    t = clock();
    insertLog.run(
      'tenant_1',
      `plog_${String(j).padStart(26, '0')}`,
      id,
      'web-form',
      'form-submitted',
      `{"i":${j}}`,
      at,
    );
    spent.log += clock() - t;
    t = clock();
    moveActivity.run(at, 'tenant_1', domain, at);
    spent.account += clock() - t;
    if (savepoints) {
      t = clock();
      db.exec('release group_commit');
      spent.savepoints += clock() - t;
    }
  }
  t = clock();
  db.exec('commit');
  spent['begin + commit'] += clock() - t;
}
db.close();
fs.rmSync(dir, { recursive: true, force: true });

const perWrite = (ns) => (Number(ns) / WRITES / 1000).toFixed(1);
const total = Object.values(spent).reduce((a, b) => a + b, 0n);
console.log(`${variant}: µs per write (${WRITES} writes, ${BATCH} per commit)`);
for (const [part, ns] of Object.entries(spent)) console.log(`  ${part.padEnd(16)} ${perWrite(ns).padStart(7)}`);
console.log(
  `  ${'total'.padEnd(16)} ${perWrite(total).padStart(7)}  (${Math.round(1e6 / (Number(total) / WRITES / 1000))} writes/s on one core)`,
);
