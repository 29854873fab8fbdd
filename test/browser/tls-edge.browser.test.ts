import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { linkOnHost } from '../factories/site.js';
import { startTestNameServer, type TestNameServer } from '../dns-server.js';
import { startTestApp, type TestApp } from '../harness.js';
import { freePort } from '../process.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';

/**
 * TLS at the edge, for real: Caddy (Debian's package) runs deploy/Caddyfile in front of the
 * service, with its own CA instead of ACME (`local_certs`), on free ports and with its own storage
 * under this test's temp dir; Chromium opens a verified tenant domain through it (the names are
 * pointed at 127.0.0.1 by `--host-resolver-rules`), and an unverified domain gets no certificate.
 */

const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';
const HAVE_CADDY = fs.existsSync(CADDY);
if (!HAVE_CADDY)
  console.log(`TLS edge test skipped: no Caddy at ${CADDY} (apt-get install -y caddy; CI always runs it)`);
announceMissingBrowser();

const API_HOST = 'api.audience-edge.com';
const VERIFIED = 'offers.edge-tenant.com';
const UNVERIFIED = 'pending.edge-tenant.com';

describe.skipIf(!HAVE_CADDY || !HAVE_BROWSER)('behind Caddy (deploy/Caddyfile): a verified domain over HTTPS', () => {
  let t: TestApp;
  let dns: TestNameServer;
  let caddy: ChildProcess;
  let caddyOutput = '';
  let dir: string;
  let httpsPort: number;
  let browser: Browser;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-caddy-'));
    dns = await startTestNameServer();
    httpsPort = await freePort();
    t = await startTestApp({
      config: {
        DNS_SERVERS: dns.address,
        TRUST_PROXY: '1',
        PUBLIC_BASE_URL: `https://${API_HOST}:${httpsPort}`,
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const upstream = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    const tenant = await t.createTenant('Edge');
    const pageId = await makePage(tenant.scope, t.clock, { title: 'Offers for {{company}}' });
    const { audienceId } = await makeAudience(tenant.scope, t.clock, { pageId, computedName: 'Globex' });
    for (const hostname of [VERIFIED, UNVERIFIED]) {
      const claimed = await t.request(tenant, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } });
      const domain = claimed.json();
      await linkOnHost(t, tenant, { tenantDomainId: domain.tenantDomainId, path: '/offer', audienceId });
      if (hostname !== VERIFIED) continue;
      dns.txt(domain.verification.name, [domain.verification.value]);
      const verified = await t.request(tenant, {
        method: 'POST',
        url: `/v0/tenant_domains/${domain.tenantDomainId}/verify`,
      });
      expect(verified.json().status).toBe('verified');
    }

    const extraGlobals = path.join(dir, 'globals');
    fs.writeFileSync(
      extraGlobals,
      `local_certs\nskip_install_trust\nstorage file_system ${path.join(dir, 'storage')}\n`,
    );
    caddy = spawn(CADDY, ['run', '--config', path.resolve('deploy/Caddyfile'), '--adapter', 'caddyfile'], {
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        XDG_DATA_HOME: path.join(dir, 'data'),
        XDG_CONFIG_HOME: path.join(dir, 'config'),
        AP_API_HOSTS: API_HOST,
        AP_UPSTREAM: upstream,
        HTTP_PORT: String(await freePort()),
        HTTPS_PORT: String(httpsPort),
        CADDY_ADMIN: 'off',
        CADDY_EXTRA_GLOBALS: extraGlobals,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    caddy.stdout!.on('data', (d) => (caddyOutput += d));
    caddy.stderr!.on('data', (d) => (caddyOutput += d));
    await listening(httpsPort, () => caddyOutput);

    browser = await launchChromium([
      `--host-resolver-rules=MAP ${API_HOST} 127.0.0.1, MAP *.edge-tenant.com 127.0.0.1, MAP * ~NOTFOUND`,
    ]);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (caddy?.exitCode === null) {
      caddy.kill('SIGTERM');
      await once(caddy, 'exit');
    }
    await t?.close();
    await dns?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the verified domain’s page in Chromium, with a certificate Caddy got for it on demand', async () => {
    const context = await browser.newContext({ userAgent: DESKTOP_UA, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const response = await page.goto(`https://${VERIFIED}:${httpsPort}/offer`);
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Offers for Globex');
    expect(new URL(page.url()).protocol).toBe('https:');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'tls-edge-verified-domain.png'), fullPage: true });
    await context.close();

    const certificate = await peerCertificate(VERIFIED);
    expect(certificate.subjectaltname).toBe(`DNS:${VERIFIED}`);
    expect(certificate.issuer.CN).toMatch(/Caddy Local Authority/);
  });

  it('reaches the API on its own host through the same edge', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const response = await page.goto(`https://${API_HOST}:${httpsPort}/healthz`);
    expect(response?.status()).toBe(200);
    expect(await response?.json()).toEqual({ status: 'ok' });
    await context.close();
  });

  it('refuses a certificate to a domain that is not verified: the TLS handshake fails', async () => {
    await expect(peerCertificate(UNVERIFIED)).rejects.toThrow(/alert|handshake|socket/i);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await expect(page.goto(`https://${UNVERIFIED}:${httpsPort}/offer`)).rejects.toThrow(/ERR_SSL|ERR_CONNECTION/);
    await context.close();
  });

  /** The certificate Caddy presents for `servername` (SNI), not checked against any CA. */
  function peerCertificate(servername: string): Promise<tls.PeerCertificate> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: httpsPort, servername, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.once('error', reject);
    });
  }
});

/** Resolves once `port` accepts connections on loopback (Caddy is up), or throws with its output. */
async function listening(port: number, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('connect', () => socket.end());
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Caddy did not start listening on ${port}: ${output()}`);
}
