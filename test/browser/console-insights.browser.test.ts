import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { TenantScope } from '../../src/db/tenant-scope.js';
import { inviteAsOperator } from '../../src/modules/console/console.auth.service.js';
import { makeAudience } from '../factories/audiences.js';
import { emit, failDelivery, subscribe, deliveriesOf } from '../factories/webhooks.js';
import { startTestApp, TestClock, type TestApp } from '../harness.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';
import { runDemo } from './demo.js';
import { screenShooter } from './console-screens.js';

/** The wall clock: the visit is recorded, and the analytics range chosen, by real time. */
class WallClock extends TestClock {
  override now(): Date {
    return systemClock.now();
  }
}

const SHOTS = path.join(SCREENSHOTS, '28');

announceMissingBrowser();

interface Session {
  sessionStartedAt: string;
  isBounce: boolean;
  hasConversion: boolean;
  hasFormSubmit: boolean;
  questionsAskedCount: number;
  timeSpentSeconds: number;
  utmSource: string;
}

/**
 * The console's analytics, people and settings screens in Chromium (issue 28): a visit to a
 * published page appears in its analytics with endpoint 7's numbers; another tenant's ids are 404
 * pages; a form without the anti-CSRF token is refused; axe-core finds no serious violation on
 * any of them at 1280 px and 320 px, where nothing scrolls sideways; screenshots to .screenshots/28/.
 */
describe.skipIf(!HAVE_BROWSER)('console analytics, people and settings in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let signInUrl: string;
  let apiKey: string;
  let pageUrl: string;
  let pageId: string;
  let othersPageId: string;

  beforeAll(async () => {
    t = await startTestApp({ clock: new WallClock() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    const demo = await runDemo(t);
    apiKey = demo.apiKey;
    signInUrl = demo.signInUrl;
    pageUrl = demo.pageUrls[0]!;
    const links = await api('/v0/page_links?limit=100');
    const link = links.items.find((l: { path: string }) => l.path === new URL(pageUrl).pathname);
    const audienceId = link.target.audienceId as string;
    for (const p of (await api('/v0/pages?limit=100')).items as { pageId: string }[]) {
      const audiences = await api(`/v0/pages/${p.pageId}/audiences?limit=100`);
      if (audiences.items.some((a: { audienceId: string }) => a.audienceId === audienceId)) pageId = p.pageId;
    }
    const other = await t.createTenant('Elsewhere Inc');
    othersPageId = (await makeAudience(other.scope, t.clock)).pageId;
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** The demo tenant's scope (the tenant of the demo's API key). */
  async function demoTenant() {
    const row = await t.database.kysely
      .selectFrom('tenants')
      .select('id')
      .where('name', '=', 'Northwind Demo')
      .executeTakeFirstOrThrow();
    return TenantScope.of(t.database, row.id);
  }

  /** A fresh sign-in link for the demo tenant (the demo's own was used by the first test). */
  async function inviteLink() {
    const tenant = await demoTenant();
    const invitation = await inviteAsOperator(t.database, t.clock, {
      tenantId: tenant.tenantId,
      email: 'second@northwind.test',
    });
    return `${origin}/console/sign-in?token=${invitation.token}`;
  }

  async function api(url: string) {
    const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
    expect(res.statusCode, url).toBe(200);
    return res.json();
  }

  async function newContext(width = 1280): Promise<BrowserContext> {
    const context = await browser.newContext({ userAgent: DESKTOP_UA, viewport: { width, height: 800 } });
    return context;
  }

  const shoot = screenShooter(SHOTS);

  async function sessionsOfToday(): Promise<Session[]> {
    const day = new Date().toISOString().slice(0, 10);
    const all: Session[] = [];
    let cursor: string | null = null;
    do {
      const query = `startDate=${day}T00:00:00Z&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
      const body = await api(`/v0/pages/${pageId}/audience_sessions?${query}`);
      all.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor !== null);
    return all;
  }

  it('a visit to a published page appears in its analytics, with endpoint 7’s numbers', async () => {
    const before = (await sessionsOfToday()).length;
    // a visitor opens the page
    const visitorContext = await newContext();
    const visitor = await visitorContext.newPage();
    await visitorContext.route(/^https:\/\//, (route) => route.fulfill({ contentType: 'text/plain', body: '' }));
    const started = visitor.waitForResponse(
      (r) => r.url().endsWith('/_ap/collect') && r.request().postData()?.includes('"start"') === true,
    );
    await visitor.goto(`${pageUrl}?utm_source=console-check&utm_campaign=issue-28`);
    expect((await started).status()).toBe(201);
    await visitorContext.close();
    let sessions = await sessionsOfToday();
    for (let i = 0; i < 50 && sessions.length === before; i++) {
      await new Promise((r) => setTimeout(r, 100));
      sessions = await sessionsOfToday();
    }
    expect(sessions.length).toBe(before + 1);

    // the console, signed in with the demo's link
    const context = await newContext();
    await context.route(
      (url) => !url.href.startsWith(origin),
      (route) => {
        throw new Error(`third-party request: ${route.request().url()}`);
      },
    );
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(signInUrl);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}/console/pages`);
    await page.goto(`${origin}/console/pages/${pageId}`);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.waitForURL(/\/analytics$/);
    // the chart is drawn by uPlot (a canvas), the table carries the same numbers
    await page.waitForSelector('figure.drawn canvas');
    const today = new Date().toISOString().slice(0, 10);
    const shown = await page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll('[data-metric]')).map((e) => [
          e.getAttribute('data-metric'),
          e.getAttribute('data-value'),
        ]),
      ),
    );
    // endpoint 7 over the screen's range (the last 30 days): only today's and the demo's sessions
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    const all: Session[] = [];
    let cursor: string | null = null;
    do {
      const body = await api(
        `/v0/pages/${pageId}/audience_sessions?startDate=${from}T00:00:00Z&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      all.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor !== null);
    const times = all.map((s) => s.timeSpentSeconds).sort((a, b) => a - b);
    const mid = Math.floor(times.length / 2);
    expect(shown).toEqual({
      sessions: String(all.length),
      medianEngagedSeconds: String(times.length % 2 ? times[mid] : (times[mid - 1]! + times[mid]!) / 2),
      bounceRate: String(all.filter((s) => s.isBounce).length / all.length),
      conversions: String(all.filter((s) => s.hasConversion).length),
      formSubmissions: String(all.filter((s) => s.hasFormSubmit).length),
      questionsAsked: String(all.reduce((n, s) => n + s.questionsAskedCount, 0)),
    });
    const todayRow = page.locator('[data-table="visitsPerDay"] tr', { hasText: today });
    expect(await todayRow.locator('td.num').textContent()).toBe(
      String(all.filter((s) => s.sessionStartedAt.startsWith(today)).length),
    );
    expect(await page.locator('td', { hasText: 'console-check' }).count()).toBe(1);
    await shoot(page, 'analytics');
    // the table fallback, opened
    await page.getByText('Visits per day as a table').click();
    await shoot(page, 'analytics-table');

    // another tenant's page: a 404 page
    const foreign = await page.goto(`${origin}/console/pages/${othersPageId}/analytics`);
    expect(foreign!.status()).toBe(404);
    await expect(page.getByRole('heading', { name: 'Not found' }).isVisible()).resolves.toBe(true);
    expect(errors.filter((e) => !e.includes('status of 404'))).toEqual([]);
    await context.close();
  }, 120_000);

  it('people and settings: search, profile, accounts, domains, webhooks, API keys; CSRF refused; axe and screenshots', async () => {
    const tenant = await demoTenant();
    const sub = await subscribe(tenant, t.clock, 'https://hooks.example.com/northwind');
    await emit(tenant, t.clock);
    let deliveries = await deliveriesOf(tenant, sub.subscriptionId);
    for (let i = 0; i < 50 && deliveries.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      deliveries = await deliveriesOf(tenant, sub.subscriptionId);
    }
    await failDelivery(t.database, deliveries[0]!.deliveryId, 5);

    const context = await newContext();
    await context.route(
      (url) => !url.href.startsWith(origin),
      (route) => {
        throw new Error(`third-party request: ${route.request().url()}`);
      },
    );
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const link = await inviteLink();
    await page.goto(link);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}/console/pages`);

    // People: search by keyboard, open a profile
    await page.getByRole('link', { name: 'People' }).click();
    await page.waitForURL(`${origin}/console/people`);
    await shoot(page, 'people');
    const person = (await api('/v0/persons/search?query=%40&limit=1')).items[0] as { email: string; personId: string };
    await page.getByLabel('Search persons by name, e-mail, domain or phone').fill(person.email);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/people\?q=/);
    await shoot(page, 'people-search');
    await page.locator(`a[href="/console/people/${person.personId}"]`).first().click();
    await page.waitForURL(`${origin}/console/people/${person.personId}`);
    expect(await page.locator('ol.timeline li').count()).toBeGreaterThan(0);
    await shoot(page, 'person');
    await page.getByRole('link', { name: 'People', exact: true }).first().click();
    await page.waitForURL(`${origin}/console/people`);
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.waitForURL(`${origin}/console/accounts`);
    await shoot(page, 'accounts');
    await page.locator('tbody a').first().click();
    await page.waitForURL(/\/console\/accounts\/account_/);
    await shoot(page, 'account');

    // Settings: domains with their record, webhooks, API keys
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL(`${origin}/console/settings`);
    await shoot(page, 'settings');
    await page.getByRole('button', { name: 'Create a key' }).click();
    await page.waitForLoadState('load');
    const key = await page.locator('[data-api-key]').textContent();
    expect(key).toMatch(/^\S{20,}$/);
    await shoot(page, 'settings-key-created');
    await page.locator(`a[href="/console/settings/webhooks/${sub.subscriptionId}"]`).click();
    await page.waitForURL(`${origin}/console/settings/webhooks/${sub.subscriptionId}`);
    await shoot(page, 'webhook-deliveries');
    await page
      .getByRole('button', { name: /^Replay delivery/ })
      .first()
      .click();
    await page.waitForLoadState('load');
    await expect(page.getByRole('status').textContent()).resolves.toContain('starts over');
    expect((await deliveriesOf(tenant, sub.subscriptionId))[0]).toMatchObject({ status: 'pending', attempts: 0 });

    // a POST without the anti-CSRF token, from the console's own page: refused, no key made
    const before = await page.evaluate(() => document.querySelectorAll('tbody tr').length);
    const refused = await page.evaluate(async () => {
      const r = await fetch('/console/settings/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=forged',
      });
      return r.status;
    });
    expect(refused).toBe(403);
    await page.goto(`${origin}/console/settings`);
    expect(await page.content()).not.toContain('forged');
    expect(before).toBeGreaterThan(0);

    // another tenant's ids: 404 pages
    const other = await t.createTenant('Second Co');
    const theirSub = await subscribe(other.scope, t.clock, 'https://hooks.example.com/second');
    expect((await page.goto(`${origin}/console/settings/webhooks/${theirSub.subscriptionId}`))!.status()).toBe(404);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
