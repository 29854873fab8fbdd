/**
 * Per-query timings behind docs/performance.md: the statements of the hot reads, executed in a
 * loop on one connection (no HTTP, no concurrency), in µs per execution.
 *
 *   npx tsx bench/queries.ts            BENCH_ENGINE=postgres npx tsx bench/queries.ts
 *
 * Seeds 10 tenants × 1,000 pages and 10,000 persons, then times each statement as the service
 * runs it (through Kysely and the app's query functions) and as raw driver calls: a bound vs a
 * literal LIMIT (SQLite), unnamed vs named prepared statements (PostgreSQL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sqliteFileIn, type Engine } from '../src/db/connect.js';
import { newId } from '../src/lib/ids.js';
import { systemClock } from '../src/lib/clock.js';
import { countPages, listPages } from '../src/modules/pages/pages.queries.js';
import { findPerson, insertPersons } from '../src/modules/persons/persons.queries.js';
import { benchTenant, createBenchDatabase } from './lib.js';
import { seedPages } from './scenarios/pages.js';

const engine = (process.env.BENCH_ENGINE ?? 'sqlite') as Engine;
const ITERATIONS = Number(process.env.ITERATIONS ?? 5000);

async function time(name: string, run: () => unknown): Promise<void> {
  for (let i = 0; i < 200; i++) await run(); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await run();
  const us = Number(process.hrtime.bigint() - started) / 1000 / ITERATIONS;
  console.log(`  ${us.toFixed(1).padStart(7)} µs  ${name}`);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-queries-'));
const bench = await createBenchDatabase(engine, dataDir, 'queries');
try {
  const tenant = await benchTenant(bench.database, 'queries');
  await seedPages(tenant.scope, systemClock, 1_000);
  for (let t = 0; t < 9; t++)
    await seedPages((await benchTenant(bench.database, `other ${t}`)).scope, systemClock, 1_000);
  const now = new Date().toISOString();
  const personIds = Array.from({ length: 10_000 }, () => newId('person'));
  await tenant.scope.transaction(async (tx) => {
    for (let i = 0; i < personIds.length; i += 500) {
      await insertPersons(
        tx,
        personIds.slice(i, i + 500).map((id, k) => ({
          id,
          name: `Person ${i + k}`,
          email: `p${i + k}@example.com`,
          email_normalized: `p${i + k}@example.com`,
          domain: null,
          phone_number: null,
          social_profile_url: null,
          social_profile_normalized: null,
          slug: `person-${i + k}`,
          account_domain: 'example.com',
          created_at: now,
          updated_at: now,
        })),
      );
    }
  });
  const personId = personIds[5000]!;
  const cols =
    'id, name, title, page_context, page_type, status, brand_id, actions, action_card_widgets, footer_links, scripts, header_action_id, metadata, audiences_count, created_at, updated_at, archived_at, deleted_at';
  const personCols =
    'id, name, email, email_normalized, domain, phone_number, social_profile_url, social_profile_normalized, slug, account_domain, created_at, updated_at';

  console.log(`${engine}: ${ITERATIONS} executions each, one connection, no concurrency`);
  console.log('through the app (Kysely, the query modules as the service calls them):');
  await time('pages list, limit 1 (listPages)', () => listPages(tenant.scope, { limit: 1, after: null }));
  await time('pages list, limit 20 (listPages)', () => listPages(tenant.scope, { limit: 20, after: null }));
  await time('pages exact count (countPages)', () => countPages(tenant.scope));
  await time('person by id (findPerson)', () => findPerson(tenant.scope, personId));

  if (engine === 'sqlite') {
    const raw = new BetterSqlite3(sqliteFileIn(dataDir), { readonly: true });
    const where = 'from pages where tenant_id = ? and deleted_at is null order by id desc';
    const bound = raw.prepare(`select ${cols} ${where} limit ?`);
    const lit1 = raw.prepare(`select ${cols} ${where} limit 1`);
    const lit20 = raw.prepare(`select ${cols} ${where} limit 20`);
    const count = raw.prepare('select count(*) as n from pages where tenant_id = ? and deleted_at is null');
    const person = raw.prepare(`select ${personCols} from persons where tenant_id = ? and id = ?`);
    console.log('raw better-sqlite3 statements, prepared once:');
    await time('pages list, `limit ?` bound to 1', () => bound.all(tenant.tenantId, 1));
    await time('pages list, `limit 1` literal', () => lit1.all(tenant.tenantId));
    await time('pages list, `limit ?` bound to 20', () => bound.all(tenant.tenantId, 20));
    await time('pages list, `limit 20` literal', () => lit20.all(tenant.tenantId));
    await time('pages exact count(*) over the partial index', () => count.get(tenant.tenantId));
    await time('person by primary key', () => person.get(tenant.tenantId, personId));
    console.log('query plans:');
    for (const [name, sqlText, args] of [
      ['bound', `select ${cols} ${where} limit ?`, [tenant.tenantId, 1]],
      ['literal', `select ${cols} ${where} limit 1`, [tenant.tenantId]],
    ] as const) {
      const plan = raw.prepare(`explain query plan ${sqlText}`).all(...args) as { detail: string }[];
      console.log(`  ${name}: ${plan.map((p) => p.detail).join(' | ')}`);
    }
    raw.close();
  } else {
    const client = new pg.Client({ connectionString: bench.env.DATABASE_URL });
    await client.connect();
    const where = 'from pages where tenant_id = $1 and deleted_at is null order by id desc';
    console.log('raw pg client, one connection:');
    await time('pages list limit 1, unnamed statement (parse+plan each time)', () =>
      client.query(`select ${cols} ${where} limit $2`, [tenant.tenantId, 1]),
    );
    await time('pages list limit 1, named prepared statement', () =>
      client.query({ name: 'l1', text: `select ${cols} ${where} limit $2`, values: [tenant.tenantId, 1] }),
    );
    await time('pages list limit 20, named prepared statement', () =>
      client.query({ name: 'l1', text: `select ${cols} ${where} limit $2`, values: [tenant.tenantId, 20] }),
    );
    await time('pages exact count(*), unnamed', () =>
      client.query('select count(*) as n from pages where tenant_id = $1 and deleted_at is null', [tenant.tenantId]),
    );
    await time('pages exact count(*), named', () =>
      client.query({
        name: 'c1',
        text: 'select count(*) as n from pages where tenant_id = $1 and deleted_at is null',
        values: [tenant.tenantId],
      }),
    );
    await time('person by primary key, unnamed', () =>
      client.query(`select ${personCols} from persons where tenant_id = $1 and id = $2`, [tenant.tenantId, personId]),
    );
    await time('person by primary key, named', () =>
      client.query({
        name: 'p1',
        text: `select ${personCols} from persons where tenant_id = $1 and id = $2`,
        values: [tenant.tenantId, personId],
      }),
    );
    await time('select 1 (the round trip alone)', () => client.query('select 1'));
    await client.end();
  }
} finally {
  await bench.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
