import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { json } from '../../src/db/json.js';
import type { TenantScope } from '../../src/db/tenant-scope.js';
import { newId } from '../../src/lib/ids.js';
import { insertAccounts } from '../../src/modules/accounts/accounts.queries.js';
import { insertPersonLogs, type NewPersonLogRow } from '../../src/modules/person-logs/person-logs.queries.js';
import { insertPersons, type NewPersonRow } from '../../src/modules/persons/persons.queries.js';
import type { BenchContext, BenchScenario } from '../lib.js';

const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Donald', 'Edsger', 'Frances'];
const FIRST_MORE = FIRST.flatMap((f) => ['', 'a', 'e', 'o', 'y'].map((s) => `${f}${s}`)); // 50
const LAST = Array.from({ length: 400 }, (_, i) => `Surname${i.toString(36)}q`);
const CHUNK = 500;

interface Seeded {
  personIds: string[];
  emails: string[];
  accountIds: string[];
  domains: string[];
}

const domainOf = (i: number) => `company${i}.example`;

/** Bulk-seeds a tenant straight into the tables (the API would take minutes for this). */
async function seed(scope: TenantScope, sizes: { persons: number; accounts: number; logs: number }): Promise<Seeded> {
  const now = new Date().toISOString();
  const out: Seeded = { personIds: [], emails: [], accountIds: [], domains: [] };
  await scope.transaction(async (tx) => {
    let accounts = [];
    for (let i = 0; i < sizes.accounts; i++) {
      const id = newId('account');
      out.accountIds.push(id);
      out.domains.push(domainOf(i));
      accounts.push({
        id,
        domain: domainOf(i),
        name: `Company ${i}`,
        created_at: now,
        updated_at: now,
        latest_activity_at: null,
      });
      if (accounts.length === CHUNK) await insertAccounts(tx, accounts.splice(0));
    }
    if (accounts.length) await insertAccounts(tx, accounts);
    accounts = [];

    let persons: NewPersonRow[] = [];
    for (let i = 0; i < sizes.persons; i++) {
      const id = newId('person');
      const first = FIRST_MORE[i % FIRST_MORE.length]!;
      const last = LAST[Math.floor(i / FIRST_MORE.length) % LAST.length]!;
      const freeMail = i % 10 === 0;
      const domain = freeMail ? 'gmail.com' : domainOf(i % sizes.accounts);
      const email = `${first}.${last}.${i}@${domain}`.toLowerCase();
      out.personIds.push(id);
      out.emails.push(email);
      persons.push({
        id,
        name: `${first} ${last}`,
        email,
        email_normalized: email,
        domain: null,
        phone_number: i % 3 === 0 ? `+1555${String(i).padStart(7, '0')}` : null,
        social_profile_url: null,
        social_profile_normalized: null,
        slug: `${first}-${last}-${i}`.toLowerCase(),
        account_domain: freeMail ? null : domain,
        created_at: now,
        updated_at: now,
      });
      if (persons.length === CHUNK) await insertPersons(tx, persons.splice(0));
    }
    if (persons.length) await insertPersons(tx, persons);
    persons = [];

    const logs: NewPersonLogRow[] = [];
    const payload = json({ form: 'pricing', utm: { source: 'bench' } });
    for (let i = 0; i < sizes.logs; i++) {
      logs.push({
        id: newId('personLog'),
        person_id: out.personIds[(i * 7919) % out.personIds.length]!,
        source: 'seed',
        type: 'webhook',
        payload,
        created_at: now,
      });
      if (logs.length === CHUNK) await insertPersonLogs(tx, logs.splice(0));
    }
    if (logs.length) await insertPersonLogs(tx, logs);
  });
  return out;
}

async function count(ctx: BenchContext, tenantId: string, table: 'persons' | 'person_logs') {
  const row = await sql<{
    n: number;
  }>`select count(*) as n from ${sql.table(table)} where tenant_id = ${tenantId}`.execute(ctx.database.kysely);
  return Number(row.rows[0]!.n);
}

/**
 * Persons, person logs and accounts: one tenant of 100,000 persons, 20,000 accounts and 500,000
 * log entries (10× fewer with BENCH_QUICK=1), and one of 10,000 persons to see search scale.
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
    await seed(small.scope, { persons: sizes.persons / 10, accounts: sizes.accounts / 10, logs: sizes.logs / 10 });
    console.log(
      `  seeded ${sizes.persons} persons, ${sizes.accounts} accounts, ${sizes.logs} log entries in ${seedSeconds.toFixed(1)} s`,
    );

    // Writes: half for existing persons, half creating persons, 10% repeating an earlier key.
    const run = randomUUID().slice(0, 8);
    const repeated = Array.from({ length: 200 }, (_, k) => ({
      source: 'crm',
      type: 'contact-updated',
      email: data.emails[k * 13]!,
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
          email: data.emails[(i * 31) % data.emails.length],
          payload: { form: 'pricing', i },
          idempotencyKey: key,
        };
      }
      return {
        source: 'enrichment',
        name: `New Person ${i}`,
        email: `new.${run}.${i}@${domainOf(i % sizes.accounts)}`,
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
    });
    // Every request carried a key, so entries written = keys stored, and each key names its entry.
    const logsWritten = (await count(ctx, large.tenantId, 'person_logs')) - logsBefore;
    const personsCreated = (await count(ctx, large.tenantId, 'persons')) - personsBefore;
    const check = await sql<{ keys: number; entries: number; created: number }>`
      select count(*) as keys,
             count(distinct l.id) as entries,
             sum(case when json_extract(k.response_body, '$.createdPerson') then 1 else 0 end) as created
      from idempotency_keys k
      left join person_logs l on l.tenant_id = k.tenant_id and l.id = json_extract(k.response_body, '$.personLogId')
      where k.tenant_id = ${large.tenantId} and k.operation = 'person_logs.create'`.execute(ctx.database.kysely);
    const { keys, entries, created } = check.rows[0]!;
    const consistent =
      Number(keys) === logsWritten && Number(entries) === logsWritten && Number(created) === personsCreated;
    console.log(
      `  person_logs check: ${logsWritten} entries written, ${keys} keys, ${entries} distinct entries named by keys, ` +
        `${personsCreated} persons created (${created} by key results): ${consistent ? 'consistent' : 'INCONSISTENT'}`,
    );
    writes.extra = { ...writes.extra, logsWritten, personsCreated, consistent };

    const personPaths = data.personIds.filter((_, i) => i % 97 === 0).map((id) => `/v0/persons/${id}`);
    await ctx.load({ name: 'GET /v0/persons/{id}', path: '', paths: personPaths, apiKey: large.apiKey });

    // What people type to find someone: a surname, a full name, a company domain, a phone number.
    const terms = [
      ...LAST.slice(0, 20),
      ...Array.from({ length: 10 }, (_, i) => `${FIRST_MORE[i * 3]} ${LAST[i * 7]}`),
      ...Array.from({ length: 10 }, (_, i) => domainOf(i * 37)),
      ...Array.from({ length: 10 }, (_, i) => `+1555${String(i * 333).padStart(7, '0')}`),
    ].map((term) => `/v0/persons/search?query=${encodeURIComponent(term)}`);
    await ctx.load({
      name: `GET /v0/persons/search (${sizes.persons / 10} persons)`,
      path: '',
      paths: terms,
      apiKey: small.apiKey,
    });
    await ctx.load({
      name: `GET /v0/persons/search (${sizes.persons} persons)`,
      path: '',
      paths: terms,
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
