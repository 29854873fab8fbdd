import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { startTestNameServer, type TestNameServer } from '../../../test/dns-server.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { txtResolver } from '../../net/dns-resolver.js';
import { tenantDomainsModule } from './tenant-domains.module.js';
import { domainCheckJobs } from './tenant-domains.check-job.js';
import type { TenantDomain } from './tenant-domains.schemas.js';
import { PROOF_GRACE_MS, FAILING_RECHECK_MS, VERIFIED_RECHECK_MS } from './tenant-domains.verification.js';

/**
 * Issue 26: the background job that retries pending claims and re-checks verified domains runs
 * on the leased-job runner (the rules themselves: tenant-domains.verification.test.ts). Driven
 * with the test clock through the runner's own claim and finish.
 */

let t: TestApp;
let dns: TestNameServer;
let alice: Tenant;
let jobs: ReturnType<typeof domainCheckJobs>;
const logLines: { level: number; msg: string }[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

beforeAll(async () => {
  dns = await startTestNameServer();
  t = await startTestApp({ config: { DNS_SERVERS: dns.address } });
  alice = await t.createTenant('Alice');
  jobs = domainCheckJobs({
    database: t.database,
    clock: t.clock,
    logger,
    resolver: txtResolver({ servers: [dns.address], tries: 1 }),
  });
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

const claim = async (hostname: string): Promise<TenantDomain> =>
  (await t.request(alice, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } })).json();
const domainOf = async (id: string): Promise<TenantDomain> =>
  (await t.request(alice, { method: 'GET', url: '/v0/tenant_domains?limit=100' }))
    .json()
    .items.find((d: TenantDomain) => d.tenantDomainId === id);
const jobOf = (id: string) =>
  t.database.kysely
    .selectFrom('tenant_domain_checks')
    .select(['status', 'available_at', 'attempts', 'lease_token'])
    .where('tenant_domain_id', '=', id)
    .executeTakeFirstOrThrow();
/** Moves the clock to the domain's job and lets the runner run what is due. */
async function runJobOf(id: string) {
  const job = await jobOf(id);
  if (job.available_at === null) throw new Error('no check queued');
  t.clock.set(job.available_at);
  return jobs.runDue();
}
const publish = (d: TenantDomain) => dns.txt(d.verification.name, [d.verification.value]);

describe('the tenant-domain check job', () => {
  it('is a worker of the tenant-domains module', () => {
    const workers = tenantDomainsModule.workers?.({
      database: t.database,
      clock: t.clock,
      logger,
      config: t.app.ctx.config,
    });
    expect(workers?.map((w) => w.name)).toEqual(['tenant-domain-checks']);
  });

  it('queues a claim at its first check, retries it on schedule, and verifies it once the record is out', async () => {
    const d = await claim('www.job-proven.com');
    expect(await jobOf(d.tenantDomainId)).toMatchObject({ status: 'due', available_at: d.nextCheckAt, attempts: 0 });
    // Nothing is due before then.
    expect(await jobs.runDue()).toEqual([]);

    expect(await runJobOf(d.tenantDomainId)).toMatchObject([{ key: d.tenantDomainId, outcome: 'completed' }]);
    const pending = await domainOf(d.tenantDomainId);
    expect(pending).toMatchObject({ status: 'pending', lastCheck: { result: 'no_record' } });
    expect(await jobOf(d.tenantDomainId)).toEqual({
      status: 'due',
      available_at: pending.nextCheckAt,
      attempts: 0,
      lease_token: null,
    });

    publish(d);
    await runJobOf(d.tenantDomainId);
    const verified = await domainOf(d.tenantDomainId);
    expect(verified).toMatchObject({ status: 'verified', verifiedAt: t.clock.now().toISOString() });
    expect((await jobOf(d.tenantDomainId)).available_at).toBe(
      new Date(t.clock.now().getTime() + VERIFIED_RECHECK_MS).toISOString(),
    );
  });

  it('stops a verified domain serving once its record stayed missing through the grace period, and says so', async () => {
    const d = await claim('pages.job-grace.com');
    publish(d);
    expect(
      (await t.request(alice, { method: 'POST', url: `/v0/tenant_domains/${d.tenantDomainId}/verify` })).statusCode,
    ).toBe(200);
    // The verify call planned the job at the domain's re-check.
    expect((await jobOf(d.tenantDomainId)).available_at).toBe((await domainOf(d.tenantDomainId)).nextCheckAt);
    const { audienceId } = await makeAudience(alice.scope, t.clock);
    await linkOnHost(t, alice, { tenantDomainId: d.tenantDomainId, path: '/p', audienceId });

    dns.txt(d.verification.name, undefined);
    logLines.splice(0);
    let runs = 0;
    while ((await domainOf(d.tenantDomainId)).status === 'verified') {
      expect((await visit(t, 'pages.job-grace.com', '/p')).statusCode).toBe(200);
      await runJobOf(d.tenantDomainId);
      runs++;
    }
    // The 6-hourly re-check that found it missing, then hourly checks to the end of the grace.
    expect(runs).toBe(1 + PROOF_GRACE_MS / FAILING_RECHECK_MS);
    expect(await domainOf(d.tenantDomainId)).toMatchObject({ status: 'pending', stopsServingAt: null });
    expect((await visit(t, 'pages.job-grace.com', '/p')).statusCode).toBe(404);
    expect(logLines.filter((l) => /proof missing/.test(l.msg))).toHaveLength(1);
    expect(logLines.filter((l) => /no longer verified/.test(l.msg))).toHaveLength(1);
  });

  it('goes idle for a domain that was removed', async () => {
    const d = await claim('gone.job-removed.com');
    expect(
      (await t.request(alice, { method: 'DELETE', url: `/v0/tenant_domains/${d.tenantDomainId}` })).statusCode,
    ).toBe(204);
    await runJobOf(d.tenantDomainId);
    expect(await jobOf(d.tenantDomainId)).toMatchObject({ status: 'idle', available_at: null });
    expect(await jobs.runDue()).toEqual([]);
  });
});
