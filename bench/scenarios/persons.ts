import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { json } from '../../src/db/json.js';
import type { TenantScope } from '../../src/db/tenant-scope.js';
import { newId } from '../../src/lib/ids.js';
import { insertAccounts } from '../../src/modules/accounts/accounts.queries.js';
import { insertPersonLogs, type NewPersonLogRow } from '../../src/modules/person-logs/person-logs.queries.js';
import { insertPersons, type NewPersonRow } from '../../src/modules/persons/persons.queries.js';
import { writePersonLog } from '../../src/modules/person-logs/person-logs.service.js';
import type { PersonLogBody } from '../../src/modules/person-logs/person-logs.schemas.js';
import { BENCH_PG_URL, CONNECTIONS, startReference, type BenchContext, type BenchScenario } from '../lib.js';
import { postgresCpuSeconds } from '../load.js';

const CHUNK = 500;

/** mulberry32: a small deterministic PRNG, so every run seeds the same data. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!,
  };
}

const SYLLABLES = (
  'ka lo mi ra ten vor bel do na shi gar ri mon tal ve zu pe cor lin sa tro fen qui dal mor ex vi po an ' +
  'stel wyn har bro ni gle op ju mar ole sen ta kir ev da us len fa ro be go hu ly nes ter ach im'
).split(' ');
const TLDS = ['com', 'com', 'com', 'com', 'io', 'net', 'de', 'co.uk', 'fr', 'nl'];
const FREE_MAIL = ['gmail.com', 'outlook.com', 'yahoo.com'];

/**
 * A tenant's worth of people as a CRM holds them: names, work emails at company domains (10% at
 * free-mail providers), a third with phone numbers. Built from syllables with a fixed seed, so
 * text is as varied as real names and domains (a search index sees realistic trigrams).
 */
function generate(sizes: { persons: number; accounts: number }, seed: number) {
  const r = prng(seed);
  const word = (min: number, max: number) => {
    const n = min + r.int(max - min + 1);
    return Array.from({ length: n }, () => r.pick(SYLLABLES)).join('');
  };
  const title = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const firsts = Array.from({ length: 400 }, () => title(word(2, 3)));
  const lasts = Array.from({ length: 5000 }, () => title(word(2, 4)));
  const domains = new Set<string>();
  while (domains.size < sizes.accounts) domains.add(`${word(2, 3)}.${r.pick(TLDS)}`);
  const domainList = [...domains];
  const emails = new Set<string>();
  const phones = new Set<string>();
  const persons = Array.from({ length: sizes.persons }, (_, i) => {
    const first = r.pick(firsts);
    const last = r.pick(lasts);
    const domain = r.next() < 0.1 ? r.pick(FREE_MAIL) : r.pick(domainList);
    let email = `${first}.${last}@${domain}`.toLowerCase();
    if (emails.has(email)) email = `${first}.${last}${i}@${domain}`.toLowerCase();
    emails.add(email);
    let phone: string | null = null;
    if (r.next() < 0.33) {
      do phone = `+${1 + r.int(9)}${String(r.int(1e10)).padStart(10, '0')}`;
      while (phones.has(phone));
      phones.add(phone);
    }
    return { name: `${first} ${last}`, last, email, domain, phone, slug: `${first}-${last}-${i}`.toLowerCase() };
  });
  return { domains: domainList, persons };
}

type Generated = ReturnType<typeof generate>;

interface Seeded extends Generated {
  personIds: string[];
  accountIds: string[];
}

/** Bulk-seeds a tenant straight into the tables (the API would take many minutes for this). */
async function seed(scope: TenantScope, sizes: { persons: number; accounts: number; logs: number }): Promise<Seeded> {
  const data = generate(sizes, 20261122);
  const now = new Date().toISOString();
  const accountIds = data.domains.map(() => newId('account'));
  const personIds = data.persons.map(() => newId('person'));
  const free = new Set(FREE_MAIL);
  await scope.transaction(async (tx) => {
    for (let i = 0; i < data.domains.length; i += CHUNK) {
      await insertAccounts(
        tx,
        data.domains.slice(i, i + CHUNK).map((domain, k) => ({
          id: accountIds[i + k]!,
          domain,
          name: domain.split('.')[0]!.toUpperCase(),
          created_at: now,
          updated_at: now,
          latest_activity_at: null,
        })),
      );
    }
    for (let i = 0; i < data.persons.length; i += CHUNK) {
      const rows: NewPersonRow[] = data.persons.slice(i, i + CHUNK).map((p, k) => ({
        id: personIds[i + k]!,
        name: p.name,
        email: p.email,
        email_normalized: p.email,
        domain: null,
        phone_number: p.phone,
        social_profile_url: null,
        social_profile_normalized: null,
        slug: p.slug,
        account_domain: free.has(p.domain) ? null : p.domain,
        created_at: now,
        updated_at: now,
      }));
      await insertPersons(tx, rows);
    }
    const payload = json({ form: 'pricing', utm: { source: 'bench' } });
    for (let i = 0; i < sizes.logs; i += CHUNK) {
      const rows: NewPersonLogRow[] = [];
      for (let k = i; k < Math.min(i + CHUNK, sizes.logs); k++) {
        rows.push({
          id: newId('personLog'),
          person_id: personIds[(k * 7919) % personIds.length]!,
          source: 'seed',
          type: 'webhook',
          payload,
          created_at: now,
        });
      }
      await insertPersonLogs(tx, rows);
    }
  });
  return { ...data, personIds, accountIds };
}

async function count(ctx: BenchContext, tenantId: string, table: 'persons' | 'person_logs') {
  const row = await sql<{
    n: number;
  }>`select count(*) as n from ${sql.table(table)} where tenant_id = ${tenantId}`.execute(ctx.database.kysely);
  return Number(row.rows[0]!.n);
}

/** What people type to find someone: a surname, a full name, a company domain, a phone number. */
function searchPaths(data: Seeded): string[] {
  const sample = Array.from({ length: 60 }, (_, k) => data.persons[(k * 7919) % data.persons.length]!);
  const terms = [
    ...sample.slice(0, 15).map((p) => p.last),
    ...sample.slice(15, 30).map((p) => p.name),
    ...sample.slice(30, 45).map((p) => p.domain),
    ...sample
      .slice(45)
      .map((p) => p.phone ?? p.email)
      .slice(0, 15),
  ];
  return terms.map((term) => `/v0/persons/search?query=${encodeURIComponent(term)}`);
}

/**
 * Persons, person logs and accounts: one tenant of 100,000 persons, 20,000 accounts and 500,000
 * log entries (10× fewer with BENCH_QUICK=1), and one 10× smaller to see how search scales.
 */
export const personsScenario: BenchScenario = {
  name: 'persons',
  async run(ctx) {
    const scale = ctx.quick ? 10 : 1;
    const sizes = { persons: 100_000 / scale, accounts: 20_000 / scale, logs: 500_000 / scale };
    const large = await ctx.createTenant('bench persons large');
    const small = await ctx.createTenant('bench persons small');
    let started = Date.now();
    const data = await seed(large.scope, sizes);
    const seedSeconds = (Date.now() - started) / 1000;
    const smallData = await seed(small.scope, {
      persons: sizes.persons / 10,
      accounts: sizes.accounts / 10,
      logs: sizes.logs / 10,
    });
    console.log(
      `  seeded ${sizes.persons} persons, ${sizes.accounts} accounts, ${sizes.logs} log entries in ${seedSeconds.toFixed(1)} s`,
    );
    // Measure from a checkpointed database, not through a WAL holding the whole seed; on
    // PostgreSQL, not beside autovacuum working through the freshly seeded tables.
    if (ctx.engine === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.database.kysely);
    else await sql`vacuum analyze`.execute(ctx.database.kysely);

    // Writes: half for existing persons, half creating persons, 10% repeating an earlier key.
    const run = randomUUID().slice(0, 8);
    const repeated = Array.from({ length: 200 }, (_, k) => ({
      source: 'crm',
      type: 'contact-updated',
      email: data.persons[k * 13]!.email,
      payload: { k },
      idempotencyKey: `repeat-${run}-${k}`,
    }));
    const body = (i: number) => {
      if (i % 10 === 0) return repeated[(i / 10) % repeated.length];
      const key = `${run}-${i}`;
      if (i % 2 === 0) {
        return {
          source: 'web-form',
          type: 'form-submitted',
          email: data.persons[(i * 31) % data.persons.length]!.email,
          payload: { form: 'pricing', i },
          idempotencyKey: key,
        };
      }
      return {
        source: 'enrichment',
        name: `New Person ${i}`,
        email: `new.${run}.${i}@${data.domains[i % data.domains.length]}`,
        payload: { title: 'Engineer', i },
        idempotencyKey: key,
      };
    };
    const logsBefore = await count(ctx, large.tenantId, 'person_logs');
    const personsBefore = await count(ctx, large.tenantId, 'persons');
    started = Date.now();
    const writes = await ctx.load({
      name: 'POST /v0/person_logs (50% new persons, 10% repeats)',
      method: 'POST',
      path: '/v0/person_logs',
      body,
      apiKey: large.apiKey,
      noCeiling: true,
    });
    // Requests still in flight when the load generator stops commit a moment later: wait until
    // the count settles before checking. Every request carried a key, so entries written = keys
    // stored, and each key names its entry.
    for (let last = -1, now = 0; last !== now;) {
      last = now;
      await new Promise((r) => setTimeout(r, 300));
      now = await count(ctx, large.tenantId, 'person_logs');
    }
    const logsWritten = (await count(ctx, large.tenantId, 'person_logs')) - logsBefore;
    const personsCreated = (await count(ctx, large.tenantId, 'persons')) - personsBefore;
    const createdOf =
      ctx.engine === 'sqlite'
        ? sql`json_extract(k.response_body, '$.createdPerson')`
        : sql`(k.response_body->>'createdPerson')::boolean`;
    const logIdOf =
      ctx.engine === 'sqlite'
        ? sql`json_extract(k.response_body, '$.personLogId')`
        : sql`k.response_body->>'personLogId'`;
    const check = await sql<{ keys: number; entries: number; created: number }>`
      select count(*) as keys,
             count(distinct l.id) as entries,
             sum(case when ${createdOf} then 1 else 0 end) as created
      from idempotency_keys k
      left join person_logs l on l.tenant_id = k.tenant_id and l.id = ${logIdOf}
      where k.tenant_id = ${large.tenantId} and k.operation = 'person_logs.create'`.execute(ctx.database.kysely);
    const { keys, entries, created } = check.rows[0]!;
    const consistent =
      Number(keys) === logsWritten && Number(entries) === logsWritten && Number(created) === personsCreated;
    console.log(
      `  person_logs check: ${logsWritten} entries written, ${keys} keys, ${entries} distinct entries named by keys, ` +
        `${personsCreated} persons created (${created} by key results): ${consistent ? 'consistent' : 'INCONSISTENT'}`,
    );
    writes.extra = { ...writes.extra, logsWritten, personsCreated, consistent };

    // The target of issue 13: every request a new email (so a new person), no idempotency key.
    const fresh = await ctx.load({
      name: 'POST /v0/person_logs (every request a new person)',
      method: 'POST',
      path: '/v0/person_logs',
      body: (i: number) => ({
        source: 'web-form',
        type: 'form-submitted',
        name: `Fresh Person ${i}`,
        email: `fresh.${run}.${i}@${data.domains[i % data.domains.length]}`,
        payload: { form: 'pricing', i },
      }),
      apiKey: large.apiKey,
      noCeiling: true,
    });
    fresh.extra = { ...fresh.extra, unit: 'durable writes/s' };
    await writesInProcess(ctx, large.scope, (i) => ({
      source: 'web-form',
      type: 'form-submitted',
      name: `Direct Person ${i}`,
      email: `direct.${run}.${i}@${data.domains[i % data.domains.length]}`,
      payload: { form: 'pricing', i },
    }));

    const personPaths = data.personIds.filter((_, i) => i % 97 === 0).map((id) => `/v0/persons/${id}`);
    await ctx.load({ name: 'GET /v0/persons/{id}', path: '', paths: personPaths, apiKey: large.apiKey });

    // The same load on the stack alone (bench/reference.mjs): what Fastify and the driver reach
    // reading one row by primary key with nothing of the service around them.
    const reference = await startReference(
      ctx.engine,
      ctx.engine === 'sqlite' ? `${ctx.dataDir}/reference.sqlite` : BENCH_PG_URL,
    );
    try {
      await ctx.load({
        name: 'GET /v0/persons/{id}, reference: bare Fastify + one row',
        path: '',
        paths: reference.paths(personPaths.length),
        apiKey: reference.key,
        target: reference,
      });
    } finally {
      await reference.stop();
    }

    await ctx.load({
      name: `GET /v0/persons/search (${sizes.persons / 10} persons)`,
      path: '',
      paths: searchPaths(smallData),
      apiKey: small.apiKey,
    });
    await ctx.load({
      name: `GET /v0/persons/search (${sizes.persons} persons)`,
      path: '',
      paths: searchPaths(data),
      apiKey: large.apiKey,
    });

    const accountPaths = data.accountIds.filter((_, i) => i % 19 === 0).map((id) => `/v0/accounts/${id}`);
    await ctx.load({
      name: 'GET /v0/accounts/{id} (with linked persons)',
      path: '',
      paths: accountPaths,
      apiKey: large.apiKey,
    });
    await ctx.load({ name: 'GET /v0/accounts?limit=20', path: '/v0/accounts?limit=20', apiKey: large.apiKey });
  },
};

/**
 * The write path without HTTP: `writePersonLog` called in this process by as many concurrent
 * callers as the load has connections, on the bench's own connection to the same database (the
 * service is idle meanwhile). What it reaches bounds what any HTTP load can; the gap to the HTTP
 * load is what the request around it costs.
 */
async function writesInProcess(ctx: BenchContext, scope: TenantScope, body: (i: number) => PersonLogBody) {
  const seconds = ctx.quick ? 3 : 5;
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const databaseBefore = ctx.engine === 'postgres' ? postgresCpuSeconds() : null;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) await writePersonLog(scope, ctx.clock, body(next++));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const databaseAfter = databaseBefore === null ? null : postgresCpuSeconds();
  const databaseCpu = databaseBefore === null || databaseAfter === null ? undefined : databaseAfter - databaseBefore;
  ctx.record({
    scenario: 'persons',
    name: 'writePersonLog in-process, no HTTP (every call a new person)',
    requestsPerSecond: Math.round(next / elapsed),
    p50Ms: 0,
    p99Ms: 0,
    responseBytes: 0,
    non2xx: 0,
    errors: 0,
    ratioToCeiling: null,
    extra: {
      unit: 'durable writes/s',
      serviceCpuMicrosPerRequest: Math.round((cpu.user + cpu.system) / next),
      ...(databaseCpu === undefined ? {} : { databaseCpuMicrosPerRequest: Math.round((databaseCpu * 1e6) / next) }),
    },
  });
}
