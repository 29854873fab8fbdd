import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestNameServer } from '../dns-server.js';
import { createTestDatabase, type TestDatabase } from '../harness.js';
import { runCliInProcess, runCliProcess, startServerProcess } from '../process.js';

// Every test here starts real processes (tsx, a cold module graph each): seconds apiece, and many
// more on a loaded machine, so the suite's 30 s default is too tight for them.
vi.setConfig({ testTimeout: 120_000 });

let db: TestDatabase;
let server: Awaited<ReturnType<typeof startServerProcess>>;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServerProcess(db.env);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await db?.cleanup();
});

// The CLI's own entry in this process (one real process below checks the exit status and the pipe).
const cli = (...args: string[]) => runCliInProcess([...args, '--json'], db.env);
const json = (stdout: string) => {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1); // exactly one JSON object on stdout
  return JSON.parse(lines[0]!);
};

describe('operator CLI', () => {
  it('creates a tenant and a key that works against the running service, lists and revokes it', async () => {
    const tenant = json((await cli('tenant', 'create', '--name', 'Acme')).stdout);
    expect(tenant.tenantId).toMatch(/^tenant_[a-z0-9]{26}$/);

    const created = await cli('key', 'create', '--tenant', tenant.tenantId, '--name', 'ci');
    expect(created.code).toBe(0);
    const key = json(created.stdout);
    expect(key.keyId).toMatch(/^key_[a-z0-9]{26}$/);
    expect(key.apiKey).toMatch(/^apsk_[0-9A-Za-z]{38}$/);

    const ok = await fetch(`${server.baseUrl}/v0/pages`, { headers: { 'x-api-key': key.apiKey } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ items: [], totalCount: 0 });

    const list = json((await cli('key', 'list', '--tenant', tenant.tenantId)).stdout);
    expect(list.keys).toEqual([
      expect.objectContaining({ keyId: key.keyId, name: 'ci', active: true, prefix: key.apiKey.slice(0, 11) }),
    ]);
    expect(JSON.stringify(list)).not.toContain(key.apiKey);

    const revoked = json((await cli('key', 'revoke', key.keyId)).stdout);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    await new Promise((r) => setTimeout(r, 1100)); // the service caches key lookups for up to 1 s
    const refused = await fetch(`${server.baseUrl}/v0/pages`, { headers: { 'x-api-key': key.apiKey } });
    expect(refused.status).toBe(401);
  });

  it('demo creates a tenant, a working key and pages of every type and state', async () => {
    const result = await cli('demo');
    expect(result.code).toBe(0);
    const demo = json(result.stdout);
    expect(demo).toMatchObject({ tenantId: expect.any(String), apiKey: expect.any(String) });
    expect(demo.pages.pageIds.length).toBeGreaterThanOrEqual(5);
    // its *.localhost domain serves at once; the production-like one waits for its TXT record
    expect(demo.tenantDomains).toMatchObject({
      localDomain: { hostname: expect.stringMatching(/\.localhost$/), status: 'verified' },
      pendingDomain: {
        status: 'pending',
        verification: { type: 'TXT', name: expect.stringMatching(/^_audience-pages-challenge\.go-/) },
      },
    });
    const res = await fetch(`${server.baseUrl}/v0/pages?limit=100`, { headers: { 'x-api-key': demo.apiKey } });
    const body = (await res.json()) as { totalCount: number; items: { pageType: string; status: string }[] };
    expect(body.totalCount).toBe(demo.pages.pageIds.length);
    expect(new Set(body.items.map((p: { pageType: string }) => p.pageType))).toEqual(
      new Set(['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom']),
    );
    expect(new Set(body.items.map((p: { status: string }) => p.status))).toEqual(
      new Set(['draft', 'published', 'archived']),
    );
  });

  it('claims a domain, shows the record to publish, verifies it, and the running server serves it within a second', async () => {
    const dns = await startTestNameServer();
    try {
      const dnsEnv = { ...db.env, DNS_SERVERS: dns.address };
      const domainCli = (...args: string[]) => runCliInProcess([...args, '--json'], dnsEnv);
      const tenant = json((await cli('tenant', 'create', '--name', 'Domains')).stdout);
      const added = json(
        (await domainCli('domain', 'add', 'shop.cli-domains.com', '--tenant', tenant.tenantId)).stdout,
      );
      expect(added).toMatchObject({
        hostname: 'shop.cli-domains.com',
        status: 'pending',
        verification: { type: 'TXT', name: '_audience-pages-challenge.shop.cli-domains.com' },
        publish: `_audience-pages-challenge.shop.cli-domains.com. 300 IN TXT "${added.verification.value}"`,
        then: `audience-pages domain verify ${added.tenantDomainId} --tenant ${tenant.tenantId}`,
      });

      const refused = await domainCli('domain', 'verify', added.tenantDomainId, '--tenant', tenant.tenantId);
      expect(refused.code).toBe(1);
      expect(json(refused.stdout).error).toMatchObject({
        code: 'domain_not_verified',
        message: expect.stringMatching(/^No TXT record at _audience-pages-challenge\.shop\.cli-domains\.com/),
      });

      dns.txt(added.verification.name, [added.verification.value]);
      const verified = json(
        (await domainCli('domain', 'verify', added.tenantDomainId, '--tenant', tenant.tenantId)).stdout,
      );
      expect(verified).toMatchObject({ tenantDomainId: added.tenantDomainId, status: 'verified' });
      const listed = json((await domainCli('domain', 'list', '--tenant', tenant.tenantId)).stdout);
      expect(listed.tenantDomains).toEqual([expect.objectContaining({ status: 'verified' })]);
      expect(listed.tenantDomains[0].publish).toBeUndefined();

      // Another process verified it: the server learns it from its host map's stamp.
      await vi.waitFor(
        async () => {
          const ask = await fetch(`${server.baseUrl}/_ap/tls-ask?domain=shop.cli-domains.com`);
          expect(ask.status).toBe(200);
        },
        { timeout: 5_000, interval: 100 },
      );
    } finally {
      await dns.close();
    }
  });

  it('reports errors as one JSON object and a non-zero exit', async () => {
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(json(unknown.stdout).error.code).toBe('usage');
    const missing = await cli('key', 'create', '--tenant', 'tenant_01h00000000000000000000000');
    expect(missing.code).toBe(1);
    expect(json(missing.stdout).error.code).toBe('not_found');
    const noName = await cli('tenant', 'create');
    expect(noName.code).toBe(1);
    expect(json(noName.stdout).error.message).toContain('--name');
  });
});

describe('server process', () => {
  it('logs one structured line per request without the API key', async () => {
    const demo = json((await cli('demo')).stdout);
    await fetch(`${server.baseUrl}/v0/pages`, { headers: { 'x-api-key': demo.apiKey, 'x-request-id': 'trace-me' } });
    // The line is written after the response; on a busy machine it can take a moment to arrive.
    const line = await vi.waitFor(
      () => {
        const found = server
          .output()
          .split('\n')
          .find((l) => l.includes('"trace-me"'));
        if (found === undefined) throw new Error('no log line yet');
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(JSON.parse(line!)).toMatchObject({
      msg: 'request',
      operationId: 'pages.list',
      statusCode: 200,
      reqId: 'trace-me',
    });
    expect(server.output()).not.toContain(demo.apiKey);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const other = await startServerProcess(db.env);
    expect(await other.stop('SIGTERM')).toBe(0);
    expect(other.output()).toContain('stopped');
  });

  it('as a real process, prints exactly one JSON object on stdout and exits 0', async () => {
    const run = await runCliProcess(['tenant', 'create', '--name', 'Piped', '--json'], db.env);
    expect(run.code).toBe(0);
    expect(json(run.stdout).tenantId).toMatch(/^tenant_[a-z0-9]{26}$/);
  });

  it('refuses to run with a bad configuration, naming the problem', async () => {
    const bad = await runCliProcess(['migrate'], { ...db.env, PORT: 'eighty' });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('PORT must be a whole number');
  });
});
