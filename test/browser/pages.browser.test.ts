import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { ENGINE, startTestApp, TestClock, type TestApp } from '../harness.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';
import { runDemo } from './demo.js';

/** The wall clock: engaged time and session ends are measured for real here. */
class WallClock extends TestClock {
  override now(): Date {
    return systemClock.now();
  }
}

announceMissingBrowser();

describe.skipIf(!HAVE_BROWSER)('a visitor in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let apiKey: string;
  let pageUrl: string;
  let pageId: string;
  let audienceId: string;

  beforeAll(async () => {
    t = await startTestApp({ clock: new WallClock() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const demo = await runDemo(t);
    apiKey = demo.apiKey;
    pageUrl = demo.pageUrls[0]!;
    origin = new URL(pageUrl).origin;
    expect(new URL(pageUrl).hostname).toMatch(/^northwind-demo-[a-z0-9]{6}\.localhost$/);
    const links = await t.app.inject({
      method: 'GET',
      url: '/v0/page_links?limit=100',
      headers: { 'x-api-key': apiKey },
    });
    const link = links
      .json()
      .items.find(
        (l: { path: string; tenantDomainId: string | null }) =>
          l.path === new URL(pageUrl).pathname && l.tenantDomainId !== null,
      );
    audienceId = link.target.audienceId;
    const pages = await t.app.inject({ method: 'GET', url: '/v0/pages?limit=100', headers: { 'x-api-key': apiKey } });
    for (const p of pages.json().items as { pageId: string }[]) {
      const audiences = await t.app.inject({
        method: 'GET',
        url: `/v0/pages/${p.pageId}/audiences?limit=100`,
        headers: { 'x-api-key': apiKey },
      });
      if (audiences.json().items.some((a: { audienceId: string }) => a.audienceId === audienceId)) pageId = p.pageId;
    }
    browser = await launchChromium();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function newContext(options: { javaScriptEnabled?: boolean; width?: number } = {}): Promise<BrowserContext> {
    const context = await browser.newContext({
      userAgent: DESKTOP_UA,
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      viewport: { width: options.width ?? 1280, height: 800 },
    });
    // no network beyond this machine: the actions' and logos' third-party URLs answer locally
    await context.route(/^https:\/\//, (route) =>
      route.request().resourceType() === 'image'
        ? route.fulfill({
            contentType: 'image/svg+xml',
            body: '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" rx="6" fill="#cbd5e1"/><text x="60" y="26" font-family="sans-serif" font-size="16" text-anchor="middle" fill="#334155">ACME</text></svg>',
          })
        : route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Elsewhere</title><p>Elsewhere</p>' }),
    );
    return context;
  }

  async function sessionsOfAudience() {
    const res = await t.app.inject({
      method: 'GET',
      url: `/v0/pages/${pageId}/audience_sessions?audienceId=${audienceId}&limit=100&startDate=${encodeURIComponent(new Date(Date.now() - 600_000).toISOString())}`,
      headers: { 'x-api-key': apiKey },
    });
    expect(res.statusCode).toBe(200);
    return res.json().items as Record<string, unknown>[];
  }

  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 5_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (ok(value) || Date.now() > deadline) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function openPage(page: Page, url: string) {
    const started = page.waitForResponse(
      (r) => r.url().endsWith('/_ap/collect') && r.request().postData()?.includes('"start"') === true,
    );
    const response = await page.goto(url);
    expect(response!.status()).toBe(200);
    const startResponse = await started;
    if (startResponse.status() !== 201) {
      const body = startResponse.request().postData();
      const again = await page.evaluate(
        async (b) => (await fetch('/_ap/collect', { method: 'POST', body: b ?? '' })).text(),
        body,
      );
      throw new Error(`start answered ${startResponse.status()}: ${again} for ${body}`);
    }
  }

  it('records a visit: UTM values, scroll, clicks, a conversion, visible through endpoint 7 within 5 s', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await openPage(
      page,
      `${pageUrl}?utm_source=newsletter&utm_medium=email&utm_campaign=q4-launch&utm_term=pages&utm_content=hero`,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, `${ENGINE}-desktop-js.png`), fullPage: true });
    await page.mouse.wheel(0, 4000);
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.waitForTimeout(300);
    const action = page.locator('main [data-ap-action]').first();
    await action.scrollIntoViewIfNeeded();
    const left = Date.now();
    await Promise.all([page.waitForURL(/^https:\/\//), action.click()]);
    await context.close();

    const sessions = await until(sessionsOfAudience, (s) => s.some((x) => x.hasConversion === true));
    expect(Date.now() - left).toBeLessThan(5_000);
    expect(errors).toEqual([]);
    const visits = sessions.filter((s) => s.utmCampaign === 'q4-launch');
    expect(visits).toHaveLength(1);
    const session = visits[0]!;
    console.log(`browser session (${ENGINE}): ${JSON.stringify(session)}`);
    expect(session).toMatchObject({
      pageId,
      audienceId,
      utmSource: 'newsletter',
      utmMedium: 'email',
      utmCampaign: 'q4-launch',
      utmTerm: 'pages',
      utmContent: 'hero',
      hasConversion: true,
      isBounce: false,
      hasFormSubmit: false,
      questionsAskedCount: 0,
      pageUrl: `${origin}${new URL(pageUrl).pathname}`,
    });
    expect(session.maxScrollDepthPercentage).toBeGreaterThanOrEqual(90);
    expect(session.totalClicksCount).toBeGreaterThanOrEqual(1);
    expect(session.analyticsSessionId).toBe(session.audienceSessionId);
  });

  it('a visit that leaves at once is a bounce', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await openPage(page, `${pageUrl}?utm_campaign=bounce-check`);
    await page.goto('about:blank');
    await context.close();
    const sessions = await until(sessionsOfAudience, (s) => s.some((x) => x.utmCampaign === 'bounce-check'));
    const bounce = sessions.filter((s) => s.utmCampaign === 'bounce-check');
    console.log(`browser bounce (${ENGINE}): ${JSON.stringify(bounce[0])}`);
    expect(bounce).toHaveLength(1);
    expect(bounce[0]).toMatchObject({ isBounce: true, hasConversion: false, totalClicksCount: 0 });
    expect(bounce[0]!.timeSpentSeconds).toBeLessThan(10);
  });

  it('reads well at 320 px and with JavaScript off (screenshots to look at)', async () => {
    for (const [name, options] of [
      ['narrow-js', { width: 320 }],
      ['desktop-nojs', { javaScriptEnabled: false }],
      ['narrow-nojs', { width: 320, javaScriptEnabled: false }],
    ] as const) {
      const context = await newContext(options);
      const page = await context.newPage();
      const response = await page.goto(pageUrl);
      expect(response!.status()).toBe(200);
      // nothing wider than the window
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, name).toBeLessThanOrEqual(0);
      await expect(page.locator('h1').isVisible()).resolves.toBe(true);
      await page.screenshot({ path: path.join(SCREENSHOTS, `${ENGINE}-${name}.png`), fullPage: true });
      await context.close();
    }
    const missing = await (await newContext()).newPage();
    await missing.goto(`${origin}/no/such/page`);
    await missing.screenshot({ path: path.join(SCREENSHOTS, `${ENGINE}-404.png`) });
  });

  it('runs no script that is not the page’s own, and the page’s scripts under its CSP', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await openPage(page, pageUrl);
    expect(await page.evaluate(() => typeof (window as unknown as { audiencePages?: unknown }).audiencePages)).toBe(
      'object',
    );
    expect(violations).toEqual([]);
    await context.close();
  });
});
