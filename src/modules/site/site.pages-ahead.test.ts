import zlib from 'node:zlib';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience, publishNewVersion } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost } from '../../../test/factories/site.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';

/**
 * Page-cache hits answered ahead of the router (issue 27, docs/performance.md): over a real
 * socket (app.inject never reaches the server's listener), a hit is the same answer the page
 * route gives, byte for byte and header for header, and a change is seen by the very next
 * request exactly as on the router's path.
 */
let t: TestApp;
let alice: Tenant;
let port: number;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A visitor's request over TCP, with the page host as its Host. */
function fetchPage(host: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<Answer>((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** The page cache's count of hits answered ahead of the router. */
const aheadCount = async () => {
  const metrics = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: 'Bearer metrics-token-for-tests' },
  });
  return Number(/^ap_page_hits_ahead_total (\d+)$/m.exec(metrics.body)?.[1] ?? 'NaN');
};

const h1 = (answer: Answer) => /<h1>(.*?)<\/h1>/.exec(answer.body.toString('utf8'))?.[1];
const withoutPerResponse = (headers: http.IncomingHttpHeaders) => {
  const { date: _date, 'x-request-id': _id, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
};

async function servedPage(host: string, linkPath: string, title: string) {
  const pageId = await makePage(alice.scope, t.clock, { status: 'published', title });
  const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Acme' });
  const link = await linkOnHost(t, alice, { hostname: host, path: linkPath, audienceId });
  return { pageId, audienceId, ...link };
}

beforeAll(async () => {
  t = await startTestApp({ config: { METRICS_TOKEN: 'metrics-token-for-tests' } });
  alice = await t.createTenant('Alice');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

describe('a page-cache hit ahead of the router', () => {
  it('answers as the page route does, in every encoding, and 304 to its ETag', async () => {
    const host = 'ahead.alice.localhost';
    await servedPage(host, '/offers', 'Offers');
    // The first request renders; the encodings are made once, off the request path.
    await fetchPage(host, '/offers');
    await expect
      .poll(async () => (await fetchPage(host, '/offers', { 'accept-encoding': 'br' })).headers['content-encoding'])
      .toBe('br');
    const identity = (await fetchPage(host, '/offers', { 'accept-encoding': 'identity' })).body;
    const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync, identity: (b: Buffer) => b };

    for (const encoding of ['br', 'gzip', 'identity'] as const) {
      const before = await aheadCount();
      // HEAD takes the router's path to the same cached entry: the headers a hit had before.
      const routed = await fetchPage(host, '/offers', { 'accept-encoding': encoding }, 'HEAD');
      const ahead = await fetchPage(host, '/offers?utm_source=x', { 'accept-encoding': encoding });
      expect(await aheadCount()).toBe(before + 1);
      expect([routed.status, ahead.status]).toEqual([200, 200]);
      expect(withoutPerResponse(ahead.headers)).toEqual(withoutPerResponse(routed.headers));
      expect(routed.headers['x-request-id']).toBeDefined();
      expect(Number(ahead.headers['content-length'])).toBe(ahead.body.length);
      expect(decode[encoding](ahead.body).equals(identity)).toBe(true);

      const revalidated = await fetchPage(host, '/offers', {
        'accept-encoding': encoding,
        'if-none-match': String(ahead.headers.etag),
      });
      expect(revalidated.status).toBe(304);
      expect(revalidated.body.length).toBe(0);
      expect(revalidated.headers.etag).toBe(ahead.headers.etag);
    }
  });

  it('leaves HEAD, misses and other hosts to the router', async () => {
    const host = 'ahead-misc.alice.localhost';
    await servedPage(host, '/p', 'Misc');
    await fetchPage(host, '/p');
    const before = await aheadCount();
    expect((await fetchPage(host, '/p', {}, 'HEAD')).status).toBe(200);
    expect((await fetchPage(host, '/nothing-here')).status).toBe(404);
    expect((await fetchPage('unknown.localhost', '/p')).status).toBe(404);
    expect(await aheadCount()).toBe(before);
  });

  it('sees a published version and a deleted link on the very next request', async () => {
    const host = 'ahead-change.alice.localhost';
    const { pageId, audienceId, pageLinkId } = await servedPage(host, '/c', 'Before');
    await fetchPage(host, '/c');
    expect(h1(await fetchPage(host, '/c'))).toBe('Before');

    await alice.scope.updateTable('pages').set({ title: 'After' }).where('id', '=', pageId).execute();
    await publishNewVersion(t, alice, pageId, audienceId);
    expect(h1(await fetchPage(host, '/c'))).toBe('After');
    expect(h1(await fetchPage(host, '/c'))).toBe('After');

    expect((await t.request(alice, { method: 'DELETE', url: `/v0/page_links/${pageLinkId}` })).statusCode).toBe(204);
    expect((await fetchPage(host, '/c')).status).toBe(404);
  });
});
