import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { drainGeneration } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { linkOnHost } from '../factories/site.js';
import { startTestApp, TestClock, type Tenant, type TestApp } from '../harness.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';

/** The wall clock: the preview URL's expiry and the visit's session are real time here. */
class WallClock extends TestClock {
  override now(): Date {
    return systemClock.now();
  }
}

announceMissingBrowser();

const SHOTS = path.join(SCREENSHOTS, '23');

/**
 * Issue 23: a draft's preview URL shows the draft with the "Preview" marker in a real browser, the
 * live link still shows the published version, the preview records no session, and a preview URL
 * whose signature was changed is refused with an HTML page.
 */
describe.skipIf(!HAVE_BROWSER)('a version preview in a real browser (Chromium)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;
  let origin: string;
  let liveUrl: string;
  let audienceId: string;
  let draftId: string;
  let pageId: string;

  const api = (method: string, url: string, body?: unknown) =>
    fetch(`${origin}${url}`, {
      method,
      headers: { 'x-api-key': tenant.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const sessions = async () =>
    Number(
      (
        await tenant.scope
          .selectFrom('audience_sessions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('audience_id', '=', audienceId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    t = await startTestApp({ clock: new WallClock() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    tenant = await t.createTenant('Preview');
    // A published page whose tenant reviews generated versions before they go live.
    pageId = await makePage(tenant.scope, t.clock, { status: 'published', title: 'The live page' });
    expect((await api('PATCH', `/v0/pages/${pageId}`, { reviewBeforePublish: true })).status).toBe(200);
    const created = await api('POST', `/v0/pages/${pageId}/audiences`, { customName: 'Trade shows' });
    expect(created.status).toBe(201);
    audienceId = ((await created.json()) as { audienceId: string }).audienceId;
    await tenant.scope.updateTable('pages').set({ title: 'The draft under review' }).where('id', '=', pageId).execute();
    await drainGeneration(t.database, t.clock);
    const versions = (await (await api('GET', `/v0/pages/${pageId}/audiences/${audienceId}/versions`)).json()) as {
      items: { versionId: string; status: string }[];
    };
    expect(versions.items.map((v) => v.status)).toEqual(['draft', 'published']);
    draftId = versions.items[0]!.versionId;
    const host = `preview-${Date.now().toString(36)}.localhost`;
    await linkOnHost(t, tenant, { hostname: host, path: '/p', audienceId });
    liveUrl = `http://${host}:${port}/p`;
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const newContext = (): Promise<BrowserContext> =>
    browser.newContext({ userAgent: DESKTOP_UA, viewport: { width: 1280, height: 800 } });

  async function waitForSessions(count: number, ms: number) {
    const until = Date.now() + ms;
    while (Date.now() < until && (await sessions()) !== count) await new Promise((r) => setTimeout(r, 100));
    return sessions();
  }

  it('shows the draft with the marker, records no session; the live link still serves the published version', async () => {
    const context = await newContext();
    // The live page: the published version, and its visit is recorded (so the check below can fail).
    const live = await context.newPage();
    await live.goto(liveUrl);
    expect(await live.locator('h1').first().textContent()).toBe('The live page');
    await expect.poll(() => waitForSessions(1, 5_000), { timeout: 10_000 }).toBe(1);
    await live.screenshot({ path: path.join(SHOTS, 'live-link.png'), fullPage: false });
    await live.close();

    const made = await api('POST', `/v0/pages/${pageId}/audiences/${audienceId}/versions/${draftId}/preview`, {});
    expect(made.status).toBe(200);
    const { previewUrl } = (await made.json()) as { previewUrl: string };
    expect(previewUrl.startsWith(`${origin}/_ap/preview/`)).toBe(true);

    const preview = await context.newPage();
    const response = await preview.goto(previewUrl);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['x-robots-tag']).toBe('noindex');
    expect(response?.headers()['cache-control']).toBe('private, no-store');
    expect(await preview.locator('h1').first().textContent()).toBe('The draft under review');
    const marker = preview.locator('.ap-preview-marker');
    expect(await marker.isVisible()).toBe(true);
    expect(await marker.textContent()).toContain('Preview');
    // The page is styled (the runtime's stylesheet loads on the API host).
    const styled = await preview.evaluate(() => getComputedStyle(document.querySelector('.ap-bar')!).display);
    expect(styled).not.toBe('inline');
    await preview.mouse.wheel(0, 600);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await sessions()).toBe(1);
    await preview.screenshot({ path: path.join(SHOTS, 'preview-draft.png'), fullPage: false });

    // The live link still shows the published version.
    const again = await context.newPage();
    await again.goto(liveUrl);
    expect(await again.locator('h1').first().textContent()).toBe('The live page');

    // A changed signature: an HTML page that says so.
    const url = new URL(previewUrl);
    const signature = url.searchParams.get('signature')!;
    url.searchParams.set('signature', (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1));
    const refused = await context.newPage();
    const refusedResponse = await refused.goto(url.toString());
    expect(refusedResponse?.status()).toBe(403);
    expect(await refused.locator('h1').textContent()).toBe('Preview link not valid');
    await refused.screenshot({ path: path.join(SHOTS, 'preview-refused.png'), fullPage: false });
    await context.close();
  });
});
