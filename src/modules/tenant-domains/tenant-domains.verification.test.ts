import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { startTestNameServer, type TestNameServer } from '../../../test/dns-server.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { txtResolver, type TxtResolver } from '../../net/dns-resolver.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import type { TenantDomain } from './tenant-domains.schemas.js';
import {
  checkTenantDomain,
  FAILING_RECHECK_MS,
  PENDING_CHECK_PERIOD_MS,
  PROOF_GRACE_MS,
  VERIFIED_RECHECK_MS,
} from './tenant-domains.verification.js';

/**
 * The background job's check (`checkTenantDomain`), driven by hand with the test clock: the
 * schedule of retries and re-checks, expiry, the grace period, and what the tenant and the logs
 * are told. The job's scheduling itself is the leased-job runner's.
 */

const MINUTE = 60_000;
let t: TestApp;
let dns: TestNameServer;
let resolver: TxtResolver;
let alice: Tenant;
let bob: Tenant;
const logLines: { level: number; msg: string; [key: string]: unknown }[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

beforeAll(async () => {
  dns = await startTestNameServer();
  resolver = txtResolver({ servers: [dns.address], tries: 1 });
  t = await startTestApp({ config: { DNS_SERVERS: dns.address } });
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
});
afterAll(async () => {
  await t.close();
  await dns.close();
});
beforeEach(() => void logLines.splice(0));

const claim = async (tenant: Tenant, hostname: string): Promise<TenantDomain> =>
  (await t.request(tenant, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } })).json();
const domainOf = async (tenant: Tenant, id: string): Promise<TenantDomain> =>
  (await t.request(tenant, { method: 'GET', url: '/v0/tenant_domains?limit=100' }))
    .json()
    .items.find((d: TenantDomain) => d.tenantDomainId === id);
const check = (tenant: Tenant, id: string) => checkTenantDomain(tenant.scope, t.clock, id, resolver, logger);
/** Moves the clock to the domain's next check and runs it, as the job would. */
async function runNextCheck(tenant: Tenant, id: string) {
  const { nextCheckAt } = await domainOf(tenant, id);
  if (nextCheckAt === null) throw new Error('no check planned');
  t.clock.set(nextCheckAt);
  return check(tenant, id);
}
const publish = (d: TenantDomain) => dns.txt(d.verification.name, [d.verification.value]);
const unpublish = (d: TenantDomain) => dns.txt(d.verification.name, undefined);
const logged = (msg: RegExp) => logLines.filter((l) => msg.test(l.msg));
const servesAfterRefresh = async (hostname: string) => {
  // What every other process sees within a second: the stamp query, then a reload.
  const hosts = pageHostsFor(t.app.ctx);
  await hosts.refresh();
  return hosts.has(hostname);
};

describe('a pending claim', () => {
  it('is checked again on a backoff (1, 2, 4 … 60 min) until its period ends, then expires', async () => {
    const d = await claim(alice, 'slow.acme-pending.com');
    const waits: number[] = [];
    let last = t.clock.now().getTime();
    let outcome;
    do {
      outcome = await runNextCheck(alice, d.tenantDomainId);
      waits.push((t.clock.now().getTime() - last) / MINUTE);
      last = t.clock.now().getTime();
    } while (outcome.kind === 'checked' && outcome.event === 'still_pending');
    expect(waits.slice(0, 9)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect(outcome).toEqual({ kind: 'checked', event: 'expired' });
    expect(t.clock.now().toISOString()).toBe(d.pendingUntil);
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'expired',
      nextCheckAt: null,
      pendingUntil: null,
      lastCheck: { result: 'no_record' },
    });
    expect(logged(/claim expired/)).toHaveLength(1);
    expect(await check(alice, d.tenantDomainId)).toEqual({ kind: 'not_scheduled' });

    // The tenant's verify call re-opens it for another period.
    const again = await t.request(alice, { method: 'POST', url: `/v0/tenant_domains/${d.tenantDomainId}/verify` });
    expect(again.statusCode).toBe(422);
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'pending',
      pendingUntil: new Date(t.clock.now().getTime() + PENDING_CHECK_PERIOD_MS).toISOString(),
      nextCheckAt: new Date(t.clock.now().getTime() + 2 * MINUTE).toISOString(),
    });
  });

  it('is verified by the check that finds its record, which ends every other claim on the name', async () => {
    const mine = await claim(alice, 'www.first-proof.com');
    const theirs = await claim(bob, 'www.first-proof.com');
    expect(await runNextCheck(alice, mine.tenantDomainId)).toEqual({ kind: 'checked', event: 'still_pending' });
    publish(mine);
    expect(await runNextCheck(alice, mine.tenantDomainId)).toEqual({ kind: 'checked', event: 'verified' });
    expect(await domainOf(alice, mine.tenantDomainId)).toMatchObject({
      status: 'verified',
      verifiedAt: t.clock.now().toISOString(),
      nextCheckAt: new Date(t.clock.now().getTime() + VERIFIED_RECHECK_MS).toISOString(),
    });
    expect(await domainOf(bob, theirs.tenantDomainId)).toMatchObject({ status: 'superseded', nextCheckAt: null });
    expect(await check(bob, theirs.tenantDomainId)).toEqual({ kind: 'not_scheduled' });
    expect(logged(/verified: it serves pages/)).toMatchObject([{ hostname: 'www.first-proof.com' }]);
    expect(await servesAfterRefresh('www.first-proof.com')).toBe(true);
  });

  it('ends as superseded when its check finds the name already proven by another tenant', async () => {
    const theirs = await claim(bob, 'shop.taken-first.com');
    const mine = await claim(alice, 'shop.taken-first.com');
    publish(theirs);
    expect(
      (await t.request(bob, { method: 'POST', url: `/v0/tenant_domains/${theirs.tenantDomainId}/verify` })).statusCode,
    ).toBe(200);
    // Alice's claim was ended by Bob's proof; a check that raced it ends it too.
    await t.database.kysely
      .updateTable('tenant_domains')
      .set({ status: 'pending', next_check_at: t.clock.now().toISOString() })
      .where('id', '=', mine.tenantDomainId)
      .execute();
    dns.txt(mine.verification.name, [mine.verification.value]);
    expect(await check(alice, mine.tenantDomainId)).toEqual({ kind: 'superseded' });
    expect(await domainOf(alice, mine.tenantDomainId)).toMatchObject({ status: 'superseded', nextCheckAt: null });
  });

  it('leaves a row that changed during the look-up alone (stale)', async () => {
    const d = await claim(alice, 'racy.acme-pending.com');
    t.clock.set(d.nextCheckAt!);
    const verifyDuringLookUp: TxtResolver = async (name, signal) => {
      await t.request(alice, { method: 'POST', url: `/v0/tenant_domains/${d.tenantDomainId}/verify` });
      return resolver(name, signal);
    };
    const before = await domainOf(alice, d.tenantDomainId);
    const outcome = await checkTenantDomain(alice.scope, t.clock, d.tenantDomainId, verifyDuringLookUp, logger);
    expect(outcome).toEqual({ kind: 'stale' });
    // what stands is the verify call's check, not the job's
    expect((await domainOf(alice, d.tenantDomainId)).lastCheck).toEqual({
      ...before.lastCheck,
      checkedAt: t.clock.now().toISOString(),
      result: 'no_record',
      detail: expect.any(String),
    });
  });
});

describe('a verified domain', () => {
  async function verified(tenant: Tenant, hostname: string) {
    const d = await claim(tenant, hostname);
    publish(d);
    const res = await t.request(tenant, { method: 'POST', url: `/v0/tenant_domains/${d.tenantDomainId}/verify` });
    expect(res.statusCode).toBe(200);
    return d;
  }

  it('is re-checked every 6 h; without its record it serves on through the grace period, then stops', async () => {
    const d = await verified(alice, 'pages.grace-shop.com');
    const { audienceId } = await makeAudience(alice.scope, t.clock);
    await linkOnHost(t, alice, { tenantDomainId: d.tenantDomainId, path: '/p', audienceId });
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_confirmed' });
    expect((await domainOf(alice, d.tenantDomainId)).nextCheckAt).toBe(
      new Date(t.clock.now().getTime() + VERIFIED_RECHECK_MS).toISOString(),
    );

    unpublish(d);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_missing' });
    const missingSince = t.clock.now().getTime();
    const stopsServingAt = new Date(missingSince + PROOF_GRACE_MS).toISOString();
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'verified',
      stopsServingAt,
      nextCheckAt: new Date(missingSince + FAILING_RECHECK_MS).toISOString(),
      lastCheck: { result: 'no_record' },
    });
    expect(logged(/proof missing/)).toMatchObject([
      { level: 40, hostname: 'pages.grace-shop.com', tenantDomainId: d.tenantDomainId, stopsServingAt },
    ]);

    let outcome;
    let checks = 0;
    do {
      outcome = await runNextCheck(alice, d.tenantDomainId);
      checks++;
      if (outcome.kind === 'checked' && outcome.event === 'proof_missing') {
        expect((await visit(t, 'pages.grace-shop.com', '/p')).statusCode).toBe(200);
      }
    } while (outcome.kind === 'checked' && outcome.event === 'proof_missing');
    expect(checks).toBe(PROOF_GRACE_MS / FAILING_RECHECK_MS);
    expect(outcome).toEqual({ kind: 'checked', event: 'lapsed' });
    expect(t.clock.now().toISOString()).toBe(stopsServingAt);
    expect(logged(/proof missing/)).toHaveLength(1); // warned once, when it went missing
    expect(logged(/no longer verified/)).toMatchObject([{ level: 40, hostname: 'pages.grace-shop.com' }]);
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'pending',
      stopsServingAt: null,
      pendingUntil: new Date(t.clock.now().getTime() + PENDING_CHECK_PERIOD_MS).toISOString(),
    });
    expect(await servesAfterRefresh('pages.grace-shop.com')).toBe(false);
    expect((await visit(t, 'pages.grace-shop.com', '/p')).statusCode).toBe(404);

    // Its owner publishes the record again: the next check verifies it anew.
    publish(d);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'verified' });
    expect(await servesAfterRefresh('pages.grace-shop.com')).toBe(true);
  });

  it('keeps serving when the record is back within the grace period', async () => {
    const d = await verified(alice, 'back.grace-shop.com');
    unpublish(d);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_missing' });
    publish(d);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_restored' });
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({ status: 'verified', stopsServingAt: null });
  });

  it('is never ended by DNS errors (its zone or our resolver failing), only by an answer without the record', async () => {
    const d = await verified(alice, 'flaky.grace-shop.com');
    unpublish(d);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_missing' });
    dns.txt(d.verification.name, 'SERVFAIL');
    t.clock.advance(PROOF_GRACE_MS);
    expect(await check(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'dns_failed' });
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'verified',
      lastCheck: { result: 'dns_error' },
      nextCheckAt: new Date(t.clock.now().getTime() + FAILING_RECHECK_MS).toISOString(),
    });
    dns.txt(d.verification.name, ['someone-else=1']);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'lapsed' });
  });

  it('from before proofs existed (as migration 0030 leaves it) is warned about at its first check', async () => {
    const d = await verified(alice, 'legacy.grace-shop.com');
    unpublish(d);
    const migratedAt = t.clock.now().toISOString();
    await t.database.kysely
      .updateTable('tenant_domains')
      .set({
        verified_at: null,
        checked_at: null,
        check_result: null,
        proof_missing_since: migratedAt,
        next_check_at: migratedAt,
      })
      .where('id', '=', d.tenantDomainId)
      .execute();
    const stopsServingAt = new Date(Date.parse(migratedAt) + PROOF_GRACE_MS).toISOString();
    expect(await domainOf(alice, d.tenantDomainId)).toMatchObject({
      status: 'verified',
      verifiedAt: null,
      stopsServingAt,
    });
    t.clock.advance(MINUTE);
    expect(await check(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_missing' });
    expect(logged(/proof missing/)).toMatchObject([{ hostname: 'legacy.grace-shop.com', stopsServingAt }]);
    expect(await runNextCheck(alice, d.tenantDomainId)).toEqual({ kind: 'checked', event: 'proof_missing' });
    expect(logged(/proof missing/)).toHaveLength(1);
  });

  it('of *.localhost is never checked', async () => {
    const d = await claim(alice, 'local-only.localhost');
    expect(d).toMatchObject({ status: 'verified', nextCheckAt: null });
    t.clock.advance(30 * 24 * 60 * MINUTE);
    expect(await check(alice, d.tenantDomainId)).toEqual({ kind: 'not_scheduled' });
  });
});
