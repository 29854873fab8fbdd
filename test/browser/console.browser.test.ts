import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { startTestApp, TestClock, type TestApp } from '../harness.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';
import { runDemo } from './demo.js';
import { screenShooter } from './console-screens.js';

/** The wall clock: sessions and links expire by real time here. */
class WallClock extends TestClock {
  override now(): Date {
    return systemClock.now();
  }
}

/** axe-core's own script, injected into each screen. */
const SHOTS = path.join(SCREENSHOTS, '28');

announceMissingBrowser();

/**
 * The console in Chromium (issue 28): signing in with the demo's link, a replayed link refused,
 * forms from another site refused, inviting a colleague by keyboard; on every screen axe-core finds
 * no serious violation, at 1280 px and at 320 px, and each is screenshotted to .screenshots/28/.
 */
describe.skipIf(!HAVE_BROWSER)('the console in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let signInUrl: string;

  beforeAll(async () => {
    t = await startTestApp({ clock: new WallClock() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    const demo = await runDemo(t);
    expect(demo.signInUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/sign-in\?token=/);
    signInUrl = demo.signInUrl;
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function newContext(width = 1280): Promise<BrowserContext> {
    const context = await browser.newContext({ userAgent: DESKTOP_UA, viewport: { width, height: 800 } });
    // nothing of the console may leave this origin
    await context.route(
      (url) => !url.href.startsWith(origin),
      (route) => {
        throw new Error(`third-party request: ${route.request().url()}`);
      },
    );
    return context;
  }

  const shoot = screenShooter(SHOTS);

  it('signs in with the demo link, invites a colleague by keyboard, refuses a replayed link and cross-site forms', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });

    expect((await page.goto(signInUrl))!.status()).toBe(200);
    await shoot(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}/console/pages`);
    await expect(page.getByRole('heading', { name: 'Pages' }).isVisible()).resolves.toBe(true);
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
    await shoot(page, 'pages');

    // a page's screen: its audiences and their versions
    await page.getByRole('link', { name: 'Sales deck: platform overview' }).click();
    await page.waitForURL(/\/console\/pages\/page_/);
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
    await shoot(page, 'page');

    // users: invite by keyboard only
    await page.getByRole('link', { name: 'Users' }).click();
    await page.waitForURL(`${origin}/console/users`);
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type('colleague@northwind.test');
    await page.keyboard.press('Enter');
    await page.waitForLoadState('load');
    const link = await page.locator('.secret').textContent();
    expect(link).toMatch(/\/console\/sign-in\?token=/);
    await shoot(page, 'users-invited');

    // the demo link again, in another browser: refused
    const other = await newContext();
    const replay = await other.newPage();
    expect((await replay.goto(signInUrl))!.status()).toBe(403);
    await expect(replay.getByRole('heading', { name: 'Link not valid' }).isVisible()).resolves.toBe(true);
    await shoot(replay, 'link-refused');

    // the colleague's link works once
    const colleague = await other.newPage();
    await colleague.goto(link!.replace(/^http:\/\/[^/]+/, origin));
    await colleague.getByRole('button', { name: 'Sign in' }).click();
    await colleague.waitForURL(`${origin}/console/pages`);

    // a POST without the CSRF token, from the console's own page, is refused
    const noToken = await page.evaluate(async () => {
      const r = await fetch('/console/users', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=forged%40evil.test',
      });
      return r.status;
    });
    expect(noToken).toBe(403);

    // a form on another site posting to the console: refused, nothing made
    await context.route('http://evil.test/**', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><form method="post" action="${origin}/console/users"><input name="email" value="cross@evil.test"></form><script>document.forms[0].submit()</script>`,
      }),
    );
    await context.unroute((url) => !url.href.startsWith(origin));
    const evil = await context.newPage();
    const answered = evil.waitForResponse((r) => r.url() === `${origin}/console/users`);
    await evil.goto('http://evil.test/');
    expect([401, 403]).toContain((await answered).status());
    await page.goto(`${origin}/console/users`);
    expect(await page.content()).not.toContain('evil.test');

    // sign out
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/console?signed=out`);
    await shoot(page, 'signed-out');
    await page.goto(`${origin}/console/pages`);
    expect(page.url()).toBe(`${origin}/console`);
    // the refused fetch above is the only failed load
    expect(errors.filter((e) => !e.includes('status of 403'))).toEqual([]);
    await other.close();
    await context.close();
  }, 120_000);
});
