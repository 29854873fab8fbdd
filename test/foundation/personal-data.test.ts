import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../catalogue.js';
import { makePerson } from '../factories/persons.js';
import { startTestApp, type Tenant, type TestApp } from '../harness.js';

/**
 * Every table that could hold personal data is either reached by `DELETE /v0/persons/{id}`
 * (src/modules/person-erasures) or listed here with the reason it holds none of a person's data.
 * A new table with such columns fails this test until it is added to one of the two lists
 * (and, if it holds a person's data, to the erasure and the export). See docs/privacy.md.
 */
const PERSONAL_COLUMN =
  /email|phone|name|payload|content|message|company|body|identifier|social|url|context|question|answer|data|artifact|address|detail|error|filename|title|text|label|ip/;

/** Tables the erasure removes or scrubs (their names are the keys of an erasure's `counts`). */
const ERASED = {
  persons: 'the person',
  person_logs: 'their log entries (payloads)',
  form_submissions: 'what they typed into forms',
  enrichment_jobs: 'the copies of it the enricher reads',
  events: 'form.* events carrying them; page.version.* events of their own pages',
  audience_sessions: 'identities copied from a form (cleared), their route key in URLs (replaced)',
  agent_messages: 'what was asked and answered in their visits',
  audiences: 'their own pages: archived, person link, route key and names cleared',
  audience_versions: 'the generated content of their own pages',
  agent_passages: 'the agent’s index of that content',
  idempotency_keys: 'stored answers of person-log writes about them (and the hash of what was sent)',
} as const;

/** Tables with such columns that hold no data about a person (the tenant's own content, or operators'). */
const NOT_A_PERSONS = {
  tenants: 'the tenant’s name',
  api_keys: 'key names chosen by the tenant',
  service_secrets: 'the service’s own secrets',
  pages: 'page templates written by the tenant',
  files: 'files the tenant uploaded (file names chosen by the tenant)',
  assets: 'the tenant’s images and documents',
  topics: 'the tenant’s knowledge base',
  topic_entries: 'the tenant’s knowledge base',
  accounts: 'companies (a domain and a company name), not persons',
  tenant_domains: 'host names the tenant claims and their DNS check results',
  page_links: 'paths chosen by the tenant (a person’s own page is reached by route key, erased with it)',
  webhook_subscriptions: 'receiver URLs of the tenant',
  webhook_deliveries: 'delivery status; the payload is the event, erased with it',
  webhook_attempts: 'the receiver’s answer (its first bytes), kept for the webhook retention period',
  console_users: 'the tenant’s own staff who sign in to the console, not visitors or persons',
  audience_imports:
    'a console import: its CSV (targets’ e-mails) only while it runs, cleared when it ends; then counts and refused lines',
  person_erasures: 'the audit trail: a random id, a time and counts',
  kysely_migration: 'the migrations that ran',
} as const;

let t: TestApp;
let alice: Tenant;
beforeAll(async () => {
  t = await startTestApp();
  alice = await t.createTenant('Alice');
});
afterAll(() => t.close());

describe('personal data coverage of the erasure', () => {
  it('every table with columns that could identify a person is erased or listed as holding none', async () => {
    const tables = await catalogue(t.database);
    const unaccounted: string[] = [];
    for (const [table, columns] of tables) {
      const personal = columns.filter((c) => PERSONAL_COLUMN.test(c));
      if (personal.length === 0) continue;
      // SQLite's full-text indexes (`persons_fts`, its shadow tables) follow their table, by triggers.
      const owner = table.replace(/_fts(_[a-z]+)?$/, '');
      if (owner in ERASED || owner in NOT_A_PERSONS) continue;
      unaccounted.push(`${table} (${personal.join(', ')})`);
    }
    expect(unaccounted, 'tables with personal-looking columns that the erasure does not cover').toEqual([]);
    // The lists name tables that exist (none forgotten after a rename).
    const stale = [...Object.keys(ERASED), ...Object.keys(NOT_A_PERSONS)].filter((name) => !tables.has(name));
    expect(stale).toEqual([]);
  });

  it('the erasure reaches exactly the tables listed as erased', async () => {
    const personId = await makePerson(alice.scope, t.clock, { email: 'cover@corp.example' });
    const res = await t.request(alice, { method: 'DELETE', url: `/v0/persons/${personId}` });
    expect(res.statusCode).toBe(204);
    const audit = await alice.scope.selectFrom('person_erasures').select('counts').executeTakeFirstOrThrow();
    expect(Object.keys(audit.counts).sort()).toEqual(Object.keys(ERASED).sort());
  });
});
