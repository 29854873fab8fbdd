import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNameServer, type TestNameServer } from '../../../test/dns-server.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { TLS_ASK_REFUSALS_PER_SECOND } from './tenant-domains.tls-ask.routes.js';

let t: TestApp;
let dns: TestNameServer;
let alice: Tenant;

beforeAll(async () => {
  dns = await startTestNameServer();
  t = await startTestApp({
    config: {
      PUBLIC_BASE_URL: 'https://api.audience-service.com',
      API_HOSTNAMES: 'admin.audience-service.net',
      DNS_SERVERS: dns.address,
    },
  });
  alice = await t.createTenant('Alice');
  await claim('shop.localhost');
  const proven = await claim('pages.acme-shop.com');
  dns.txt(proven.verification.name, [proven.verification.value]);
  const verified = await t.request(alice, {
    method: 'POST',
    url: `/v0/tenant_domains/${proven.tenantDomainId}/verify`,
  });
  expect(verified.statusCode).toBe(200);
  await claim('pending.acme-shop.com');
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

async function claim(hostname: string) {
  const res = await t.request(alice, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const ask = (domain: string, options: { ip?: string; host?: string } = {}) =>
  t.app.inject({
    method: 'GET',
    url: `/_ap/tls-ask?domain=${encodeURIComponent(domain)}`,
    headers: { host: options.host ?? '127.0.0.1:3000' },
    remoteAddress: options.ip ?? '10.0.0.1',
  });

describe('GET /_ap/tls-ask (Caddy’s on-demand TLS ask)', () => {
  it('answers 200 for verified domains and the service’s own host names, with no body', async () => {
    for (const domain of [
      'shop.localhost',
      'pages.acme-shop.com',
      'PAGES.Acme-Shop.com.',
      'pages.acme-shop.com:443',
      'api.audience-service.com',
      'admin.audience-service.net',
    ]) {
      const res = await ask(domain);
      expect(res.statusCode, domain).toBe(200);
      expect(res.body).toBe('');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('answers 404 for everything else: pending claims, unknown names, names under the service’s, junk', async () => {
    for (const domain of [
      'pending.acme-shop.com',
      'nobody.acme-shop.com',
      'x.api.audience-service.com',
      'audience-service.com',
      'pages.acme-shop.com/x',
      '127.0.0.1',
      '',
    ]) {
      expect((await ask(domain, { ip: '10.0.0.2' })).statusCode, domain).toBe(404);
    }
  });

  it('is not served on tenant hosts, which only serve pages', async () => {
    const res = await ask('pages.acme-shop.com', { host: 'shop.localhost' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('limits refusals per client (429), never the names that serve', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5 * TLS_ASK_REFUSALS_PER_SECOND + 20; i++) {
      statuses.push((await ask(`made-up-${i}.example.com`, { ip: '10.0.0.9' })).statusCode);
    }
    expect(statuses.slice(0, 100).every((s) => s === 404)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const limited = await ask('another.example.com', { ip: '10.0.0.9' });
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect((await ask('pages.acme-shop.com', { ip: '10.0.0.9' })).statusCode).toBe(200);
    expect((await ask('another.example.com', { ip: '10.0.0.10' })).statusCode).toBe(404);
  });
});
