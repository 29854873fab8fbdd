import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../lib/clock.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { runCliInProcess } from '../../../test/process.js';
import { startTestSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../../test/smtp-server.js';

const HOST = 'localhost:3000';
const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = 's3cret-pw';
const LINK = /http:\/\/localhost:3000\/console\/sign-in\?token=([A-Za-z0-9_-]{43})/;

function cookieOf(response: LightMyRequestResponse): string {
  return String(response.headers['set-cookie']).split(';')[0]!;
}

function csrfOf(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
}

/** The link in a mail's text part and in its HTML part (the same). */
function linksIn(mail: ReceivedMail): string[] {
  return [...mail.decoded.matchAll(new RegExp(LINK.source, 'g'))].map((m) => m[0]);
}

describe('console invitations by e-mail (SMTP_URL set)', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let acme: Tenant;
  const logs: string[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    smtp = await startTestSmtpServer({ user: 'pages', password: PASSWORD });
    const config = { SMTP_URL: smtp.url, MAIL_FROM: 'Acme Pages <pages@acme.test>' };
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });
    t = await startTestApp({ config, logger: pino({ level: 'info' }, sink) });
    acme = await t.createTenant('Acme');
    env = { ...t.database.env, ...config };
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });
  beforeEach(() => smtp.refuseMessages(false));

  function post(url: string, body: Record<string, string>, cookie?: string) {
    return t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, 'content-type': FORM, origin: `http://${HOST}`, ...(cookie ? { cookie } : {}) },
      payload: new URLSearchParams(body).toString(),
    });
  }

  it('the CLI mails the link to the invited address; the link in the mail signs in once', async () => {
    const run = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'Ana@Acme.test', '--json'],
      env,
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { signInUrl: string; emailed: boolean; expiresAt: string };
    expect(out.emailed).toBe(true);
    const mail = await smtp.next();
    expect(mail.to).toEqual(['ana@acme.test']);
    expect(mail.from).toBe('pages@acme.test');
    expect(mail.raw).toMatch(/^Subject: Your sign-in link to the Audience Pages console/m);
    expect(mail.raw).toContain('Content-Type: text/plain');
    expect(mail.raw).toContain('Content-Type: text/html');
    expect(mail.decoded).toContain('expires in 15 minutes');
    // The same link in the text and in the HTML (an <a href> and the address to copy).
    const links = linksIn(mail);
    expect(links.length).toBeGreaterThanOrEqual(2);
    expect(new Set(links)).toEqual(new Set([out.signInUrl]));
    // The CLI runs on the system's clock (the app below on the test's, which is earlier).
    expect(Math.abs(Date.parse(out.expiresAt) - Date.now() - 15 * MINUTE_MS)).toBeLessThan(10_000);

    const token = LINK.exec(links[0]!)![1]!;
    const signedIn = await post('/console/sign-in', { token });
    expect(signedIn.statusCode).toBe(303);
    const pages = await t.app.inject({ url: '/console/pages', headers: { host: HOST, cookie: cookieOf(signedIn) } });
    expect(pages.statusCode).toBe(200);
    expect(pages.body).toContain('ana@acme.test');
    expect((await post('/console/sign-in', { token })).statusCode).toBe(403);
  });

  it('a colleague invited on the Users screen gets the link by e-mail; the HTML escapes the inviter', async () => {
    const invite = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'x<b>@acme.test', '--json'],
      env,
    );
    // An address the console refuses sends nothing.
    expect(invite.code).toBe(1);
    expect(smtp.received.length).toBe(1);

    const first = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', "o'b&r@acme.test"],
      env,
    );
    const token = LINK.exec((await smtp.next()).decoded)![1]!;
    expect(first.code).toBe(0);
    const cookie = cookieOf(await post('/console/sign-in', { token }));
    const users = await t.app.inject({ url: '/console/users', headers: { host: HOST, cookie } });
    const invited = await post('/console/users', { email: 'cy@acme.test', _csrf: csrfOf(users.body) }, cookie);
    expect(invited.statusCode).toBe(200);
    expect(invited.body).toContain('was sent by e-mail to <strong>cy@acme.test</strong>');
    const mail = await smtp.next();
    expect(mail.to).toEqual(['cy@acme.test']);
    expect(mail.decoded).toContain("o'b&r@acme.test invited you"); // the text part
    expect(mail.decoded).toContain("o'b&amp;r@acme.test invited you"); // the HTML part, escaped
    const link = linksIn(mail)[0]!;
    expect(invited.body).toContain(link);
    // The colleague's link signs in, to the same tenant, once.
    const colleague = LINK.exec(link)![1]!;
    expect((await post('/console/sign-in', { token: colleague })).statusCode).toBe(303);
    expect((await post('/console/sign-in', { token: colleague })).statusCode).toBe(403);
  });

  it('a mail the server refuses: the CLI exits 3 with the link and why; the screen is a 502 showing the link', async () => {
    smtp.refuseMessages(true);
    const run = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'dee@acme.test', '--json'],
      env,
    );
    expect(run.code).toBe(3);
    const out = JSON.parse(run.stdout) as {
      signInUrl: string;
      emailed: boolean;
      error: { code: string; message: string };
    };
    expect(out.emailed).toBe(false);
    expect(out.signInUrl).toMatch(LINK);
    expect(out.error.code).toBe('mail_failed');
    expect(out.error.message).toContain('could not be sent');
    expect(out.error.message).toContain('554');
    expect(out.error.message).not.toContain(PASSWORD);
    // The link was made all the same: it signs in.
    const cookie = cookieOf(await post('/console/sign-in', { token: LINK.exec(out.signInUrl)![1]! }));

    const plain = await runCliInProcess(['user', 'invite', '--tenant', acme.tenantId, '--email', 'eve@acme.test'], env);
    expect(plain.code).toBe(3);
    expect(plain.stdout).toMatch(LINK);
    expect(plain.stderr).toContain('The sign-in link was made, but the e-mail to eve@acme.test could not be sent');

    logs.length = 0;
    const users = await t.app.inject({ url: '/console/users', headers: { host: HOST, cookie } });
    const invited = await post('/console/users', { email: 'fay@acme.test', _csrf: csrfOf(users.body) }, cookie);
    expect(invited.statusCode).toBe(502);
    expect(invited.body).toContain('role="alert"');
    expect(invited.body).toContain('the e-mail could not be sent');
    const link = LINK.exec(invited.body)![0];
    expect(invited.body).toContain(`data-copy="${link}"`);
    // The operator's log says why, never with the link, the address or the server's password.
    const logged = logs.join('');
    expect(logged).toContain('invitation e-mail not sent');
    expect(logged).toContain('554');
    expect(logged).not.toContain(LINK.exec(link)![1]!);
    expect(logged).not.toContain('fay@acme.test');
    expect(logged).not.toContain(PASSWORD);
    expect((await post('/console/sign-in', { token: LINK.exec(link)![1]! })).statusCode).toBe(303);
  });

  it('a wrong password or no server: the reason names neither the password nor the link', async () => {
    const wrong = { ...env, SMTP_URL: smtp.url.replace(encodeURIComponent(PASSWORD), 'not-the-pw') };
    const refused = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'gil@acme.test', '--json'],
      wrong,
    );
    expect(refused.code).toBe(3);
    const message = (JSON.parse(refused.stdout) as { error: { message: string } }).error.message;
    expect(message).toContain('535');
    expect(message).not.toContain('not-the-pw');

    const closed = { ...env, SMTP_URL: 'smtp://pages:not-the-pw@127.0.0.1:1' };
    const nobody = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'hal@acme.test', '--json'],
      closed,
    );
    expect(nobody.code).toBe(3);
    const why = (JSON.parse(nobody.stdout) as { error: { message: string } }).error.message;
    expect(why).toContain('ECONNREFUSED');
    expect(why).not.toContain('not-the-pw');
    expect(why).not.toContain('token=');
  });
});

describe('console invitations without SMTP_URL', () => {
  let t: TestApp;
  let acme: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createTenant('Acme');
  });
  afterAll(() => t.close());

  it('the CLI prints the link as before, with no mail field', async () => {
    const run = await runCliInProcess(
      ['user', 'invite', '--tenant', acme.tenantId, '--email', 'ana@acme.test', '--json'],
      t.database.env,
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['email', 'expiresAt', 'signInUrl', 'userId']);
  });
});
