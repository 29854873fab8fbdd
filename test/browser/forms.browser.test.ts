import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { makeAudience } from '../factories/audiences.js';
import { enrichmentRunner } from '../factories/enrichment.js';
import { makePage } from '../factories/pages.js';
import { linkOnHost } from '../factories/site.js';
import { PUBLIC_ALIAS, startReceiver, subscribe, testEngine, type Receiver } from '../factories/webhooks.js';
import { ENGINE, startTestApp, TestClock, type Tenant, type TestApp } from '../harness.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium } from './browser.js';

/** Real time: the page script measures the fill time, and receivers check webhook timestamps. */
class WallClock extends TestClock {
  override now(): Date {
    return systemClock.now();
  }
}

/** The parts of the form.* payloads the test reads. */
interface FormEventData {
  formSubmission: { formSubmissionId: string };
  formSubmissionId: string;
  analyticsSessionId: string | null;
}

/** Screenshots of the form's states, to be looked at (not committed). */
const SHOTS = path.join('/tmp', 'forms-screenshots');

announceMissingBrowser();

describe.skipIf(!HAVE_BROWSER)('a visitor fills in a page’s form in a real browser (Chromium)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;
  let receiver: Receiver;
  let secret: string;
  let pageUrl: string;
  let pageId: string;
  let audienceId: string;

  beforeAll(async () => {
    // The default fill time: the page script's stamp, and the no-script second send (docs/forms.md).
    t = await startTestApp({ clock: new WallClock(), config: { FORM_MIN_FILL_MS: '1500' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    tenant = await t.createTenant('Forms');
    pageId = await makePage(tenant.scope, t.clock, {
      title: 'A plan for {{company}}',
      status: 'published',
      actions: [
        { purpose: 'Book', buttonTitle: 'Book a demo', actionType: 'calendar', url: 'https://example.com/book' },
        { purpose: 'Talk to our team', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' },
      ],
      headerActionIndex: 0,
    });
    audienceId = (
      await makeAudience(tenant.scope, t.clock, {
        pageId,
        computedName: 'Acme',
        personRouteKey: null,
        actionFormIdOverride: 'contact-sales',
        actionFormInstructionsOverride: 'Tell us what you need and we will answer within a day.',
      })
    ).audienceId;
    const hostname = `forms-${Math.random().toString(36).slice(2, 8)}.localhost`;
    await linkOnHost(t, tenant, { hostname, path: '/contact', audienceId });
    pageUrl = `http://${hostname}:${port}/contact`;
    receiver = await startReceiver(PUBLIC_ALIAS);
    secret = (
      await subscribe(tenant.scope, t.clock, receiver.url, [
        'form.submitted',
        'form.enriched',
        'form.enrichment_failed',
      ])
    ).signingSecret;
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  async function newContext(javaScriptEnabled: boolean): Promise<BrowserContext> {
    return browser.newContext({ userAgent: DESKTOP_UA, javaScriptEnabled, viewport: { width: 1024, height: 900 } });
  }

  /**
   * Runs the queued enrichment jobs (the worker's own step, as the service's worker runs it), then
   * delivers what the outbox holds; returns every verified form.* event received, in arrival order.
   */
  async function delivered() {
    await enrichmentRunner(t.database, t.clock).drain();
    const { engine, close } = testEngine(t.database, t.clock);
    try {
      await engine.drain();
    } finally {
      await close();
    }
    const verifier = new Webhook(secret);
    return receiver.requests.map(
      (r) =>
        verifier.verify(r.body, {
          'webhook-id': String(r.headers['webhook-id']),
          'webhook-timestamp': String(r.headers['webhook-timestamp']),
          'webhook-signature': String(r.headers['webhook-signature']),
        }) as { type: string; data: FormEventData },
    );
  }

  async function sessions() {
    const res = await t.request(tenant, {
      method: 'GET',
      url: `/v0/pages/${pageId}/audience_sessions?audienceId=${audienceId}&limit=100`,
    });
    expect(res.statusCode).toBe(200);
    return res.json().items as Record<string, unknown>[];
  }

  async function fill(page: Page, values: Record<string, string>) {
    for (const [name, value] of Object.entries(values)) await page.locator(`form [name="${name}"]`).fill(value);
  }

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(SHOTS, `${ENGINE}-${name}.png`), fullPage: true });

  it('with JavaScript: errors in place, then one submission, form.submitted signed, the session marked', async () => {
    const context = await newContext(true);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const started = page.waitForResponse((r) => r.url().endsWith('/_ap/collect') && r.status() === 201);
    await page.goto(pageUrl);
    await started;
    const form = page.locator('form[data-ap-form]');
    await form.scrollIntoViewIfNeeded();
    expect(await page.locator('input[name="ap_token"]').inputValue()).toMatch(/^[0-9a-f-]{36}$/);
    await shot(page, 'form-js');

    await fill(page, {
      email: 'jane.doe@acme-corp.example',
      name: 'Jane Doe',
      company: 'Acme Corp',
      phoneNumber: '0155 1234',
      message: 'We would like a demo for 40 people.',
    });
    await page.waitForTimeout(1_600); // a person takes longer than FORM_MIN_FILL_MS
    const refused = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/contact'));
    await page.locator('form button[type="submit"]').click();
    expect((await refused).status()).toBe(422);
    const phone = page.locator('form [name="phoneNumber"]');
    await expect.poll(() => phone.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.ap-form-summary').isVisible()).toBe(true);
    expect(await page.locator('.ap-field--phoneNumber .ap-field-error').textContent()).toContain('international');
    await shot(page, 'errors-js');

    await fill(page, { phoneNumber: '+14155550123' });
    const accepted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/contact'));
    await page.locator('form button[type="submit"]').click();
    expect((await accepted).status()).toBe(201);
    await expect.poll(() => page.locator('.ap-form-sent').isVisible()).toBe(true);
    expect(await form.isVisible()).toBe(false);
    await shot(page, 'thank-you-js');
    await context.close();
    expect(errors).toEqual([]);

    const received = await delivered();
    const events = received.filter((e) => e.type === 'form.submitted');
    expect(events).toHaveLength(1);
    const data = events[0]!.data;
    // A business address: the submission, then its enrichment (exactly one), in that order.
    const mine = received.filter(
      (e) =>
        (e.data.formSubmission?.formSubmissionId ?? e.data.formSubmissionId) === data.formSubmission.formSubmissionId,
    );
    expect(mine.map((e) => e.type)).toEqual(['form.submitted', 'form.enriched']);
    expect(mine[1]!.data).toMatchObject({
      person: { email: 'jane.doe@acme-corp.example', domain: 'acme-corp.example' },
      account: { domain: 'acme-corp.example' },
      enrichment: { provider: 'domain' },
    });
    expect(data).toMatchObject({
      formSubmission: {
        email: 'jane.doe@acme-corp.example',
        formId: 'contact-sales',
        company: 'Acme Corp',
        phoneNumber: '+14155550123',
      },
      page: { pageId },
      audience: { audienceId },
      // The phone a form sends is submitted data, never the person's (docs/forms.md#identity).
      person: { email: 'jane.doe@acme-corp.example', name: 'Jane Doe', phoneNumber: null },
    });
    expect(data.analyticsSessionId).toMatch(/^session_/);
    const marked = (await sessions()).find((s) => s.audienceSessionId === data.analyticsSessionId);
    console.log(`browser form session (${ENGINE}): ${JSON.stringify(marked)}`);
    expect(marked).toMatchObject({
      hasFormSubmit: true,
      hasConversion: true,
      isBounce: false,
      formSubmissionId: data.formSubmission.formSubmissionId,
      formSubmissionIdentifier: 'contact-sales',
      formSubmissionEmail: 'jane.doe@acme-corp.example',
      formSubmissionPhone: '+14155550123',
    });
  });

  it('with JavaScript, sent at once: the script waits out the fill time the service names, and sends once', async () => {
    const context = await newContext(true);
    const page = await context.newPage();
    const answers: number[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().includes('/contact')) answers.push(r.status());
    });
    const stamped = page.waitForResponse((r) => r.url().endsWith('/_ap/form-stamp') && r.status() === 200);
    await page.goto(pageUrl);
    await page.locator('form[data-ap-form]').scrollIntoViewIfNeeded();
    await stamped;
    await fill(page, { email: 'quick@initech.example' });
    await page.locator('form button[type="submit"]').click();
    await expect.poll(() => page.locator('.ap-form-sent').isVisible(), { timeout: 5_000 }).toBe(true);
    expect(answers).toEqual([422, 201]);
    await context.close();
    const rows = await tenant.scope
      .selectFrom('form_submissions')
      .selectAll()
      .where('email', '=', 'quick@initech.example')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('with a free-mail address: form.submitted, then form.enrichment_failed (free_mail_domain)', async () => {
    const context = await newContext(true);
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.locator('form[data-ap-form]').scrollIntoViewIfNeeded();
    await fill(page, { email: 'sam.jones@gmail.com', name: 'Sam Jones' });
    await page.waitForTimeout(1_600); // a person takes longer than FORM_MIN_FILL_MS
    const accepted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/contact'));
    await page.locator('form button[type="submit"]').click();
    expect((await accepted).status()).toBe(201);
    await expect.poll(() => page.locator('.ap-form-sent').isVisible()).toBe(true);
    await context.close();

    const received = await delivered();
    const submitted = received.find(
      (e) => e.type === 'form.submitted' && JSON.stringify(e.data).includes('sam.jones@gmail.com'),
    );
    expect(submitted).toBeDefined();
    const id = submitted!.data.formSubmission.formSubmissionId;
    const mine = received.filter((e) => (e.data.formSubmission?.formSubmissionId ?? e.data.formSubmissionId) === id);
    expect(mine.map((e) => e.type)).toEqual(['form.submitted', 'form.enrichment_failed']);
    expect(mine[1]!.data).toMatchObject({
      person: { email: 'sam.jones@gmail.com' },
      failure: { reason: 'free_mail_domain', provider: 'domain', attempts: 1 },
    });
  });

  it('without JavaScript: the page again with inline errors and values kept, then the thank-you state', async () => {
    const context = await newContext(false);
    const page = await context.newPage();
    await page.goto(pageUrl);
    await fill(page, { email: 'sam@initech.example', name: 'Sam <b>Smith</b>', phoneNumber: '12345' });
    await Promise.all([page.waitForLoadState('load'), page.locator('form button[type="submit"]').click()]);
    await page.waitForSelector('.ap-form-summary:not([hidden])');
    expect(await page.locator('form [name="name"]').inputValue()).toBe('Sam <b>Smith</b>');
    expect(await page.locator('form [name="phoneNumber"]').getAttribute('aria-invalid')).toBe('true');
    await page.locator('.ap-form').scrollIntoViewIfNeeded();
    await shot(page, 'errors-nojs');

    // Shown again, the form carries the service's stamp: the fill time counts from it.
    expect(await page.locator('form [name="ap_stamp"]').inputValue()).toMatch(/^\d+\./);
    await fill(page, { phoneNumber: '+442079460000' });
    await page.waitForTimeout(1_600); // a person takes longer than FORM_MIN_FILL_MS
    await Promise.all([page.waitForURL(/#ap-sent-/), page.locator('form button[type="submit"]').click()]);
    expect(new URL(page.url()).pathname).toBe('/contact');
    expect(await page.locator('.ap-form-sent').isVisible()).toBe(true);
    expect(await page.locator('form[data-ap-form]').isVisible()).toBe(false);
    await shot(page, 'thank-you-nojs');
    await context.close();

    const rows = await tenant.scope
      .selectFrom('form_submissions')
      .selectAll()
      .where('email', '=', 'sam@initech.example')
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.analytics_session_id).toBeNull();
  });

  it('a plain form POST over HTTP (no browser): first the page again with a stamp, then 303 to the thank-you state, twice = one submission', async () => {
    const url = new URL(pageUrl);
    /** node:http, because fetch does not let a client name the Host (the tenant's page host). */
    const request = (method: 'GET' | 'POST', body?: string) =>
      new Promise<{ status: number; location: string | undefined; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: url.port,
            path: url.pathname,
            method,
            headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const action = /name="ap_action" value="([^"]+)"/.exec((await request('GET')).text)?.[1] ?? '';
    const body = new URLSearchParams({ email: 'plain@globex.example', ap_audience: audienceId, ap_action: action });
    // Without a stamp, the minimum fill time is counted from the page shown again (docs/forms.md).
    const first = await request('POST', body.toString());
    expect(first.status).toBe(422);
    expect(first.text).toContain('press the button again');
    body.set('ap_stamp', /name="ap_stamp" value="([^"]+)"/.exec(first.text)?.[1] ?? '');
    expect(await request('POST', body.toString())).toMatchObject({ status: 422 }); // too soon
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    for (const res of [await request('POST', body.toString()), await request('POST', body.toString())]) {
      expect(res.status).toBe(303);
      expect(res.location).toBe(`/contact#ap-sent-${action}`);
    }
    const rows = await tenant.scope
      .selectFrom('form_submissions')
      .selectAll()
      .where('email', '=', 'plain@globex.example')
      .execute();
    expect(rows).toHaveLength(1);
  });
});
