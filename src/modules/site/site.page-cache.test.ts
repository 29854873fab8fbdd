import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience, publishNewVersion } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { ENGINE, startTestApp, testConfig, type Tenant, type TestApp } from '../../../test/harness.js';
import { buildApp } from '../../app.js';
import { connectDatabase, type Database } from '../../db/connect.js';
import { archiveAudience } from '../audiences/index.js';

/**
 * The page cache (issue 27): a hit touches no database; every change that alters what a host and
 * path serve is seen by the next request in the committing process and by every other process
 * within a second; nothing of a visitor is in the shared bytes; hosts never share entries; a
 * flood of unknown paths or of spellings of one page cannot evict live pages.
 */

let t: TestApp;
let alice: Tenant;

beforeAll(async () => {
  // Misses are not limited here: the flood below is the point.
  t = await startTestApp({ config: { PAGE_MISSES_PER_MINUTE: '0', PAGE_CACHE_MB: '1' } });
  alice = await t.createTenant('Alice');
});
afterAll(() => t.close());

const h1 = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

/** A page with an audience linked at `path` on `host`, visited once (so its route is cached). */
async function servedPage(host: string, linkPath: string, title: string, tenantDomainId?: string | null) {
  const pageId = await makePage(alice.scope, t.clock, { status: 'published', title });
  const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Acme' });
  const link = await linkOnHost(
    t,
    alice,
    tenantDomainId === undefined
      ? { hostname: host, path: linkPath, audienceId }
      : { tenantDomainId, path: linkPath, audienceId },
  );
  const first = await visit(t, host, linkPath);
  expect(first.statusCode).toBe(200);
  expect(h1(first.body)).toBe(title);
  expect(h1((await visit(t, host, linkPath)).body)).toBe(title);
  return { pageId, audienceId, ...link };
}

/** A second connection to the test's database: what another server process has. */
function secondConnection(): Database {
  if (ENGINE === 'postgres') {
    const schema = /search_path=([^,\s]+)/.exec(t.database.env.PGOPTIONS!)![1]!;
    return connectDatabase({ databaseUrl: t.database.env.DATABASE_URL!, pgSchema: `${schema},public`, pgPoolSize: 2 });
  }
  return connectDatabase({ databaseUrl: null, sqliteFile: path.join(t.database.dataDir, 'audience-pages.sqlite') });
}

/** Another server process on the same database (its own connection, its own cache). */
async function otherProcess(config: Record<string, string> = {}): Promise<{ app: FastifyInstance; db: Database }> {
  const db = secondConnection();
  const app = await buildApp({
    config: testConfig({ ...t.database.env, PAGE_MISSES_PER_MINUTE: '0', ...config }),
    database: db,
    logger: pino({ level: 'silent' }),
    clock: t.clock,
  });
  await app.ready();
  return { app, db };
}

const get = (app: FastifyInstance, host: string, url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers: { host, ...headers } });

describe('invalidation: the next request in the committing process sees the change', () => {
  it('a version published', async () => {
    const host = 'publish.alice.localhost';
    const { pageId, audienceId } = await servedPage(host, '/p', 'Before');
    await alice.scope.updateTable('pages').set({ title: 'After' }).where('id', '=', pageId).execute();
    await publishNewVersion(t, alice, pageId, audienceId);
    expect(h1((await visit(t, host, '/p')).body)).toBe('After');
  });

  it('a link retargeted, moved and deleted', async () => {
    const host = 'links.alice.localhost';
    const { pageLinkId, tenantDomainId } = await servedPage(host, '/l', 'First page');
    const second = await servedPage(host, '/second', 'Second page', tenantDomainId);

    const retarget = await t.request(alice, {
      method: 'PATCH',
      url: `/v0/page_links/${pageLinkId}`,
      payload: { target: { targetType: 'audience', audienceId: second.audienceId } },
    });
    expect(retarget.statusCode).toBe(200);
    expect(h1((await visit(t, host, '/l')).body)).toBe('Second page');

    const move = await t.request(alice, {
      method: 'PATCH',
      url: `/v0/page_links/${pageLinkId}`,
      payload: { path: '/moved' },
    });
    expect(move.statusCode).toBe(200);
    expect((await visit(t, host, '/l')).statusCode).toBe(404);
    expect(h1((await visit(t, host, '/moved')).body)).toBe('Second page');

    expect((await t.request(alice, { method: 'DELETE', url: `/v0/page_links/${pageLinkId}` })).statusCode).toBe(204);
    expect((await visit(t, host, '/moved')).statusCode).toBe(404);
  });

  it('a link created at a path a person’s route key answered', async () => {
    const host = 'keys.alice.localhost';
    const pageId = await makePage(alice.scope, t.clock, { status: 'published', title: 'Offers for {{company}}' });
    const parent = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Everyone' });
    await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Jane', personRouteKey: 'jane' });
    const other = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Other' });
    const { tenantDomainId } = await linkOnHost(t, alice, {
      hostname: host,
      path: '/o',
      audienceId: parent.audienceId,
    });
    expect(h1((await visit(t, host, '/o/jane')).body)).toBe('Offers for Jane');
    await linkOnHost(t, alice, { tenantDomainId, path: '/o/jane', audienceId: other.audienceId });
    expect(h1((await visit(t, host, '/o/jane')).body)).toBe('Offers for Other');
  });

  it('an audience archived (410)', async () => {
    const host = 'archive.alice.localhost';
    const { audienceId } = await servedPage(host, '/a', 'Archived soon');
    await archiveAudience(alice.scope, t.clock, audienceId);
    expect((await visit(t, host, '/a')).statusCode).toBe(410);
  });

  it('a domain deleted', async () => {
    const host = 'deleted.alice.localhost';
    const { tenantDomainId } = await servedPage(host, '/d', 'On a domain');
    const removed = await t.request(alice, { method: 'DELETE', url: `/v0/tenant_domains/${tenantDomainId}` });
    expect(removed.statusCode).toBe(204);
    expect((await visit(t, host, '/d')).statusCode).not.toBe(200);
  });
});

describe('a hit', () => {
  it('touches no database: served with the process’s database closed, byte for byte', async () => {
    const host = 'memory.alice.localhost';
    await servedPage(host, '/m', 'From memory');
    const other = await otherProcess();
    try {
      const first = await get(other.app, host, '/m');
      expect(first.statusCode).toBe(200);
      await other.db.close();
      const hit = await get(other.app, host, '/m');
      expect(hit.statusCode).toBe(200);
      expect(hit.body).toBe(first.body);
      expect(hit.headers.etag).toBe(first.headers.etag);
    } finally {
      await other.app.close();
    }
  });
});

describe('cache safety', () => {
  it('nothing of a visitor is in the shared bytes', async () => {
    const host = 'shared.alice.localhost';
    await servedPage(host, '/s', 'Shared');
    const a = await visit(t, host, '/s', {
      cookie: 'ap_s=abc; other=1',
      'user-agent': 'Visitor A',
      'accept-language': 'de',
      'x-forwarded-for': '203.0.113.7',
    });
    const b = await visit(t, host, '/s', { 'user-agent': 'Visitor B', 'accept-language': 'fr' });
    expect(a.body).toBe(b.body);
    expect(a.headers.etag).toBe(b.headers.etag);
    expect(a.headers['set-cookie']).toBeUndefined();
    expect(a.body).not.toContain('Visitor A');
    expect(a.body).not.toContain('203.0.113.7');
  });

  it('hosts never share entries, and a port in the Host header makes no entry of its own', async () => {
    const one = 'one.alice.localhost';
    const two = 'two.alice.localhost';
    const pageId = await makePage(alice.scope, t.clock, { status: 'published', title: 'Page of {{company}}' });
    const first = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'One' });
    const second = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Two' });
    await linkOnHost(t, alice, { hostname: one, path: '/same', audienceId: first.audienceId });
    await linkOnHost(t, alice, { hostname: two, path: '/same', audienceId: second.audienceId });
    for (let i = 0; i < 2; i++) {
      expect(h1((await visit(t, one, '/same')).body)).toBe('Page of One');
      expect(h1((await visit(t, two, '/same')).body)).toBe('Page of Two');
    }
    // Absolute URLs in a page are the verified host's, never what the header said.
    const plain = await visit(t, one, '/same');
    for (const host of [`${one}:1`, `${one}:65535`, one.toUpperCase(), `${one}.`]) {
      const res = await visit(t, host, '/same');
      expect(res.statusCode, host).toBe(200);
      expect(res.headers.etag, host).toBe(plain.headers.etag);
      expect(res.body).not.toContain(':65535');
    }
  });

  it('a flood of unknown paths and of spellings of a page does not evict live pages', async () => {
    const host = 'flood.alice.localhost';
    await servedPage(host, '/live', 'Still here');
    const other = await otherProcess({ PAGE_CACHE_MB: '1' });
    try {
      const first = await get(other.app, host, '/live');
      expect(first.statusCode).toBe(200);
      for (let i = 0; i < 600; i++) {
        expect((await get(other.app, host, `/unknown-${i}`)).statusCode).toBe(404);
        // The same page spelled otherwise is answered, never kept.
        expect((await get(other.app, host, `/live/${'/'.repeat(i % 5)}`)).statusCode).toBe(200);
      }
      for (const spelling of ['/live/', '//live', '/live//']) {
        expect((await get(other.app, host, spelling)).statusCode, spelling).toBe(200);
      }
      await other.db.close();
      const hit = await get(other.app, host, '/live');
      expect(hit.statusCode).toBe(200);
      expect(hit.body).toBe(first.body);
    } finally {
      await other.app.close();
    }
  });
});

describe('several processes', () => {
  it('another process sees a publish, a link deleted and an audience archived within a second', async () => {
    const host = 'elsewhere.alice.localhost';
    const { pageId, audienceId, pageLinkId } = await servedPage(host, '/e', 'Old');
    const other = await otherProcess();
    const within = async (expected: (res: Awaited<ReturnType<typeof get>>) => boolean) => {
      const started = Date.now();
      for (;;) {
        const res = await get(other.app, host, '/e');
        if (expected(res)) return Date.now() - started;
        if (Date.now() - started > 1_000) throw new Error(`still ${res.statusCode} ${h1(res.body)} after a second`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      // The other process has learnt the host and keeps the page.
      await within((res) => h1(res.body) === 'Old');
      expect(h1((await get(other.app, host, '/e')).body)).toBe('Old');

      await alice.scope.updateTable('pages').set({ title: 'New' }).where('id', '=', pageId).execute();
      await t.request(alice, {
        method: 'POST',
        url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
        payload: {},
      });
      await drainGeneration(t.database, t.clock);
      expect(h1((await visit(t, host, '/e')).body)).toBe('New');
      expect(await within((res) => h1(res.body) === 'New')).toBeLessThanOrEqual(1_000);

      await archiveAudience(alice.scope, t.clock, audienceId);
      expect(await within((res) => res.statusCode === 410)).toBeLessThanOrEqual(1_000);

      await t.request(alice, { method: 'DELETE', url: `/v0/page_links/${pageLinkId}` });
      expect(await within((res) => res.statusCode === 404)).toBeLessThanOrEqual(1_000);
    } finally {
      await other.app.close();
      await other.db.close();
    }
  });
});
