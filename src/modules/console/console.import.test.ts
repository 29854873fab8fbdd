import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audienceImportJobs } from '../audiences/index.js';
import { makePage } from '../../../test/factories/pages.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { inviteAsOperator } from './console.auth.service.js';
import { boundaryOf, parseMultipart } from './console.import.multipart.js';
import { IMPORT_MAX_BYTES } from './console.import.routes.js';

const HOST = 'localhost:3000';
const BOUNDARY = '----consoletest7MA4YWxkTrZu0gW';

function multipart(fields: Record<string, string>, file?: { name: string; content: string | Buffer }): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n`,
      ),
      Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

/** The console's CSV import (issue 28): an upload queues an import job (the CLI's import service), both engines. */
describe('console import screen', () => {
  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;
  let cookie: string;
  let csrf: string;

  async function signIn(tenant: Tenant): Promise<string> {
    const invitation = await inviteAsOperator(t.database, t.clock, { tenantId: tenant.tenantId, email: 'a@x.test' });
    const response: LightMyRequestResponse = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', origin: `http://${HOST}` },
      payload: new URLSearchParams({ token: invitation.token }).toString(),
    });
    return String(response.headers['set-cookie']).split(';')[0]!;
  }

  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createTenant('Acme');
    other = await t.createTenant('Other');
    cookie = await signIn(acme);
    const list = await t.app.inject({ method: 'GET', url: '/console/pages', headers: { host: HOST, cookie } });
    csrf = /name="_csrf" value="([^"]+)"/.exec(list.body)![1]!;
  });
  afterAll(() => t.close());

  function upload(pageId: string, body: Buffer, as = cookie) {
    return t.app.inject({
      method: 'POST',
      url: `/console/pages/${pageId}/import`,
      headers: {
        host: HOST,
        cookie: as,
        origin: `http://${HOST}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      },
      payload: body,
    });
  }

  function get(url: string, as = cookie) {
    return t.app.inject({ method: 'GET', url, headers: { host: HOST, cookie: as } });
  }

  /** The import worker's runs until nothing is due (what the worker does in the background). */
  const runImports = () =>
    audienceImportJobs({ database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) }).drain();

  const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

  it('an upload starts an import; its screen shows progress, then created, existing and refused rows', async () => {
    const pageId = await makePage(acme.scope, t.clock, { name: 'Import target' });
    const screen = await get(`/console/pages/${pageId}/import`);
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toContain('enctype="multipart/form-data"');
    const csv = [
      'email,name,company,domain,context',
      'sam@globex.test,Sam Lee,Globex,globex.test,Met at the fair',
      'not-an-address,Bad Row,,,',
      ',,Initech,initech.test,',
      'SAM@globex.test,Sam again,,,',
    ].join('\r\n');
    const response = await upload(pageId, multipart({ _csrf: csrf }, { name: 'targets.csv', content: csv }));
    expect(response.statusCode).toBe(303);
    const location = String(response.headers.location);
    expect(location).toMatch(/^\/console\/imports\/import_[a-z0-9]{26}$/);
    expect(t.notified).toContain('audience-imports');

    // Before the worker has run: waiting, a progress bar, a refresh without script, the status URL.
    const waiting = await get(location);
    expect(waiting.statusCode).toBe(200);
    expect(waiting.headers['content-security-policy']).toContain("script-src 'self'");
    expect(waiting.body).toContain('<progress');
    expect(waiting.body).toContain(`data-import-status="${location}/status"`);
    expect(waiting.body).toContain('<noscript><meta http-equiv="refresh" content="2"/></noscript>');
    expect(textOf(waiting.body)).toContain('Import waiting to start: targets.csv');
    const status = await get(`${location}/status`);
    expect(status.statusCode).toBe(200);
    expect(status.headers['cache-control']).toBe('no-store');
    expect(status.json()).toEqual({ status: 'queued', rows: null, done: 0, created: 0, existing: 0, failed: 0 });

    expect((await runImports()).map((s) => s.outcome)).toEqual(['completed']);
    expect((await get(`${location}/status`)).json()).toEqual({
      status: 'done',
      rows: 4,
      done: 4,
      created: 2,
      existing: 1,
      failed: 1,
    });
    const summary = await get(location);
    const text = textOf(summary.body);
    expect(text).toContain('Import done: targets.csv');
    expect(text).toMatch(/Rows read 4 Created 2 Already there 1 Refused 1/);
    expect(text).toMatch(/ 3 email email /);
    expect(summary.body).toContain('<progress aria-labelledby="progress-label" max="4" value="4"');
    expect(summary.body).not.toContain('data-import-status');
    expect(summary.body).not.toContain('http-equiv="refresh"');
    const audiences = await t.request(acme, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
    expect(audiences.json().totalCount).toBe(2);
    // the same file again creates nothing
    const again = await upload(pageId, multipart({ _csrf: csrf }, { name: 'targets.csv', content: csv }));
    await runImports();
    expect(textOf((await get(String(again.headers.location))).body)).toMatch(/Created 0 Already there 3 Refused 1/);

    // Another tenant's import is a 404 page, and so is its status; a malformed id too.
    const otherCookie = await signIn(other);
    const foreign = await get(location, otherCookie);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.headers['content-type']).toContain('text/html');
    expect((await get(`${location}/status`, otherCookie)).statusCode).toBe(404);
    expect((await get('/console/imports/import_nope')).statusCode).toBe(404);
    expect((await get(location, '')).statusCode).toBe(303); // to sign in
  });

  it('an import whose page is archived before it runs ends refused, saying why', async () => {
    const pageId = await makePage(acme.scope, t.clock);
    const response = await upload(pageId, multipart({ _csrf: csrf }, { name: 'late.csv', content: 'email\na@b.test' }));
    const location = String(response.headers.location);
    await t.request(acme, { method: 'POST', url: `/v0/pages/${pageId}/archive`, payload: {} });
    await runImports();
    const screen = await get(location);
    expect(screen.statusCode).toBe(200);
    expect(textOf(screen.body)).toContain('Import refused: late.csv');
    expect(screen.body).toContain('role="alert"');
    expect(textOf(screen.body)).toMatch(/Nothing more was imported: .*archived/);
  });

  it('refuses a header it cannot read, an empty upload, a file over the limit, no token, another tenant’s page', async () => {
    const pageId = await makePage(acme.scope, t.clock);
    const badHeader = await upload(pageId, multipart({ _csrf: csrf }, { name: 'x.csv', content: 'who,what\na,b' }));
    expect(badHeader.statusCode).toBe(422);
    expect(badHeader.body).toContain('unknown columns');
    expect((await upload(pageId, multipart({ _csrf: csrf }))).statusCode).toBe(422);
    const big = Buffer.alloc(IMPORT_MAX_BYTES + 1, 'a');
    expect((await upload(pageId, multipart({ _csrf: csrf }, { name: 'big.csv', content: big }))).statusCode).toBe(413);
    const huge = Buffer.alloc(IMPORT_MAX_BYTES + 200 * 1024, 'a');
    expect((await upload(pageId, multipart({ _csrf: csrf }, { name: 'huge.csv', content: huge }))).statusCode).toBe(
      413,
    );
    const nul = await upload(pageId, multipart({ _csrf: csrf }, { name: 'x.csv', content: 'email\na\u0000@b.test' }));
    expect(nul.statusCode).toBe(422);
    expect(nul.body).toContain('not a text file');
    const noToken = await upload(pageId, multipart({}, { name: 'x.csv', content: 'email\na@b.test' }));
    expect(noToken.statusCode).toBe(403);
    const otherCookie = await signIn(other);
    const otherList = await t.app.inject({
      method: 'GET',
      url: '/console/pages',
      headers: { host: HOST, cookie: otherCookie },
    });
    const otherCsrf = /name="_csrf" value="([^"]+)"/.exec(otherList.body)![1]!;
    const foreign = await upload(
      pageId,
      multipart({ _csrf: otherCsrf }, { name: 'x.csv', content: 'email\na@b.test' }),
      otherCookie,
    );
    expect(foreign.statusCode).toBe(404);
    const audiences = await t.request(acme, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
    expect(audiences.json().totalCount).toBe(0);
    const queued = await acme.scope.selectFrom('audience_imports').select('id').where('page_id', '=', pageId).execute();
    expect(queued).toEqual([]);
  });

  it('reads multipart as browsers send it, and refuses what is not', () => {
    expect(boundaryOf('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(boundaryOf('multipart/form-data')).toBeNull();
    const parsed = parseMultipart(multipart({ a: 'é' }, { name: 'f q.csv', content: 'x\r\ny' }), BOUNDARY);
    expect(parsed).toEqual({
      fields: { a: 'é' },
      files: { file: { filename: 'f q.csv', data: Buffer.from('x\r\ny') } },
    });
    expect(parseMultipart(Buffer.from('garbage'), BOUNDARY)).toBeNull();
  });
});
