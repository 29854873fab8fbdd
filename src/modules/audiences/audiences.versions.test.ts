import { describe, expect, it } from 'vitest';
import { drainGeneration } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import type { CliContext } from '../../cli/command.js';
import { audiencesCommands } from './audiences.cli.js';

/**
 * Versions over the API (issue 23): list, get with content, publish a draft, roll back to an
 * archived version, preview any generated version at a signed URL; review before live.
 */

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const json = { 'content-type': 'application/json' };
const base = (pageId: string, audienceId: string) => `/v0/pages/${pageId}/audiences/${audienceId}/versions`;
const list = (tenant: Tenant | null, pageId: string, audienceId: string, query = '') =>
  t.request(tenant, { method: 'GET', url: `${base(pageId, audienceId)}${query}` });
const getVersion = (tenant: Tenant | null, pageId: string, audienceId: string, versionId: string) =>
  t.request(tenant, { method: 'GET', url: `${base(pageId, audienceId)}/${versionId}` });
const post = (tenant: Tenant | null, pageId: string, audienceId: string, versionId: string, action: string) =>
  t.request(tenant, {
    method: 'POST',
    url: `${base(pageId, audienceId)}/${versionId}/${action}`,
    headers: json,
    payload: '{}',
  });
const newVersion = (tenant: Tenant, pageId: string, audienceId: string) =>
  t.request(tenant, { method: 'POST', url: base(pageId, audienceId), headers: json, payload: '{}' });
const h1 = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

async function setTitle(tenant: Tenant, pageId: string, title: string) {
  await tenant.scope.updateTable('pages').set({ title }).where('id', '=', pageId).execute();
}

/** A page (reviewing versions first when asked) and an audience on it, version 2 generated. */
async function audienceWithDraft(tenant: Tenant, options: { status?: 'draft' | 'published' } = {}) {
  const pageId = await makePage(tenant.scope, t.clock, { status: options.status ?? 'draft', title: 'First' });
  if (options.status === 'published') {
    const patched = await t.request(tenant, {
      method: 'PATCH',
      url: `/v0/pages/${pageId}`,
      payload: { reviewBeforePublish: true },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().reviewBeforePublish).toBe(true);
  }
  const created = await t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences`,
    payload: { customName: 'Trade shows' },
  });
  expect(created.statusCode).toBe(201);
  const audience = created.json();
  await setTitle(tenant, pageId, 'Second');
  await drainGeneration(t.database, t.clock);
  const versions = (await list(tenant, pageId, audience.audienceId)).json().items;
  return {
    pageId,
    audienceId: audience.audienceId as string,
    v1: versions[1].versionId as string,
    v2: versions[0].versionId as string,
  };
}

describe('GET …/versions and …/versions/{version_id} (extension)', () => {
  it('lists newest first with a keyset cursor, and shows a version with its content and how it was made', async () => {
    const { pageId, audienceId, v1, v2 } = await audienceWithDraft(alice);
    const queued = (await newVersion(alice, pageId, audienceId)).json();

    const first = await list(alice, pageId, audienceId, '?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ totalCount: 3, hasMore: true });
    expect(first.json().items.map((v: { versionNumber: number }) => v.versionNumber)).toEqual([3, 2]);
    expect(first.json().items[0]).toMatchObject({ versionId: queued.versionId, status: 'queued' });
    const next = await list(alice, pageId, audienceId, `?limit=2&cursor=${first.json().nextCursor}`);
    expect(next.json()).toMatchObject({ hasMore: false, nextCursor: null, items: [{ versionId: v1 }] });

    const detail = await getVersion(alice, pageId, audienceId, v2);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({
      versionId: v2,
      versionNumber: 2,
      status: 'draft', // a queued version 3 retires nothing (a newer draft would)
      generation: { generator: 'builtin-writer-v1', attempts: 1, lastFailureReason: null },
      content: { contentType: expect.stringContaining('audience-page'), sha256: expect.any(String) },
    });
  });

  it('a queued version has no content yet; another audience’s, tenant’s or unknown version is 404; no key 401', async () => {
    const { pageId, audienceId, v2 } = await audienceWithDraft(alice);
    const queued = (await newVersion(alice, pageId, audienceId)).json();
    const detail = (await getVersion(alice, pageId, audienceId, queued.versionId)).json();
    expect(detail).toMatchObject({ status: 'queued', content: null, generation: { generator: null, attempts: 0 } });

    const other = await audienceWithDraft(alice);
    expect((await getVersion(alice, other.pageId, other.audienceId, v2)).statusCode).toBe(404);
    expect((await getVersion(alice, pageId, other.audienceId, v2)).statusCode).toBe(404);
    expect((await getVersion(bob, pageId, audienceId, v2)).statusCode).toBe(404);
    expect((await list(bob, pageId, audienceId)).statusCode).toBe(404);
    expect((await getVersion(alice, pageId, audienceId, 'version_00000000000000000000000000')).statusCode).toBe(404);
    expect((await getVersion(null, pageId, audienceId, v2)).statusCode).toBe(401);
    expect((await list(null, pageId, audienceId)).statusCode).toBe(401);
  });
});

describe('POST …/versions/{version_id}/publish (extension)', () => {
  it('review before live: on a published page the generated version waits; publishing it serves it at once', async () => {
    const { pageId, audienceId, v1, v2 } = await audienceWithDraft(alice, { status: 'published' });
    const host = 'review.alice.localhost';
    await linkOnHost(t, alice, { hostname: host, path: '/r', audienceId });
    expect(h1((await visit(t, host, '/r')).body)).toBe('First'); // the draft waited
    expect((await getVersion(alice, pageId, audienceId, v2)).json().status).toBe('draft');

    const published = await post(alice, pageId, audienceId, v2, 'publish');
    expect(published.statusCode).toBe(200);
    expect(published.json()).toMatchObject({ versionId: v2, status: 'published', publishedAt: expect.any(String) });
    const previous = (await getVersion(alice, pageId, audienceId, v1)).json();
    expect(previous).toMatchObject({ status: 'archived', obsoleteAt: expect.any(String) });
    expect(h1((await visit(t, host, '/r')).body)).toBe('Second'); // the page cache let go at once

    const events = await alice.scope
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'page.version.published')
      .execute();
    const event = events.find((e) => (e.data as { versionId: string }).versionId === v2);
    expect(event?.data).toMatchObject({ previousVersionId: v1, audienceId, pageId });

    // Publishing the live version again changes nothing.
    const again = await post(alice, pageId, audienceId, v2, 'publish');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(published.json());
  });

  it('rolls back: an archived version is copied into a new live version; a generation in flight is superseded', async () => {
    const { pageId, audienceId, v1, v2 } = await audienceWithDraft(alice);
    expect((await post(alice, pageId, audienceId, v2, 'publish')).statusCode).toBe(200);
    const inFlight = (await newVersion(alice, pageId, audienceId)).json();

    const rolled = await post(alice, pageId, audienceId, v1, 'publish');
    expect(rolled.statusCode).toBe(201);
    expect(rolled.json()).toMatchObject({ versionNumber: 4, status: 'published' });
    const copy = (await getVersion(alice, pageId, audienceId, rolled.json().versionId)).json();
    const source = (await getVersion(alice, pageId, audienceId, v1)).json();
    expect(copy.content).toEqual(source.content);
    expect(copy.generation.generator).toBe(source.generation.generator);
    expect((await getVersion(alice, pageId, audienceId, v2)).json()).toMatchObject({
      status: 'archived',
      obsoleteAt: expect.any(String),
    });
    expect((await getVersion(alice, pageId, audienceId, inFlight.versionId)).json().status).toBe('cancelled');
    const audience = (
      await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}/audiences/${audienceId}` })
    ).json();
    expect(audience.publishedVersion.versionId).toBe(rolled.json().versionId);
    // A retried rollback with an idempotencyKey answers the first and copies nothing twice.
    const retry = () =>
      t.request(alice, {
        method: 'POST',
        url: `${base(pageId, audienceId)}/${v2}/publish`,
        payload: { idempotencyKey: 'roll-to-v2' },
      });
    const first = await retry();
    expect(first.statusCode).toBe(201);
    const repeated = await retry();
    expect(repeated.statusCode).toBe(201);
    expect(repeated.headers['idempotent-replayed']).toBe('true');
    expect(repeated.json().versionId).toBe(first.json().versionId);
    expect((await list(alice, pageId, audienceId)).json().totalCount).toBe(5);
    const live = (await list(alice, pageId, audienceId))
      .json()
      .items.filter((v: { status: string }) => v.status === 'published');
    expect(live).toHaveLength(1);
  });

  it('refuses a queued or cancelled version (409 version_not_publishable), changing nothing; 404 / 401 as usual', async () => {
    const { pageId, audienceId, v2 } = await audienceWithDraft(alice);
    const cancelled = (await newVersion(alice, pageId, audienceId)).json();
    const queued = (await newVersion(alice, pageId, audienceId)).json();
    const before = await rowCounts(alice);
    for (const versionId of [queued.versionId, cancelled.versionId]) {
      const res = await post(alice, pageId, audienceId, versionId, 'publish');
      expect(res.statusCode).toBe(409);
      expect(problem(res).code).toBe('version_not_publishable');
    }
    expect(await rowCounts(alice)).toEqual(before);
    expect((await post(bob, pageId, audienceId, v2, 'publish')).statusCode).toBe(404);
    expect((await post(null, pageId, audienceId, v2, 'publish')).statusCode).toBe(401);
    expect((await getVersion(alice, pageId, audienceId, v2)).json().status).toBe('draft');

    await t.request(alice, { method: 'POST', url: `/v0/pages/${pageId}/audiences/${audienceId}/archive`, payload: {} });
    const archived = await audienceWithDraft(alice);
    await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${archived.pageId}/audiences/${archived.audienceId}/archive`,
      payload: {},
    });
    const refused = await post(alice, archived.pageId, archived.audienceId, archived.v2, 'publish');
    expect(problem(refused).code).toBe('audience_archived');
  });
});

describe('POST …/versions/{version_id}/preview (extension)', () => {
  it('a signed URL renders exactly that version with a marker, never cached, never indexed, no view token', async () => {
    const { pageId, audienceId, v1, v2 } = await audienceWithDraft(alice);
    const res = await post(alice, pageId, audienceId, v2, 'preview');
    expect(res.statusCode).toBe(200);
    const { previewUrl, expiresAt } = res.json();
    expect(Date.parse(expiresAt) - t.clock.now().getTime()).toBeGreaterThan(59 * 60_000);
    const url = new URL(previewUrl);
    expect(url.pathname).toBe(`/_ap/preview/${alice.tenantId}/${v2}`);

    const page = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(page.statusCode).toBe(200);
    expect(h1(page.body)).toBe('Second');
    expect(page.body).toContain('Preview — version 2 (draft)');
    expect(page.body).not.toContain('ap-view');
    expect(page.headers['cache-control']).toBe('private, no-store');
    expect(page.headers['x-robots-tag']).toBe('noindex');
    const css = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1]!;
    expect((await t.app.inject({ method: 'GET', url: css })).statusCode).toBe(200);

    // An archived (older) version previews too.
    const old = new URL((await post(alice, pageId, audienceId, v1, 'preview')).json().previewUrl);
    expect(h1((await t.app.inject({ method: 'GET', url: old.pathname + old.search })).body)).toBe('First');

    // Changed: another version with this signature, a changed signature; then expired.
    const other = await t.app.inject({ method: 'GET', url: old.pathname + url.search });
    expect(other.statusCode).toBe(403);
    expect(other.headers['content-type']).toContain('text/html');
    expect(other.body).toContain('Preview link not valid');
    const forged = url.search.replace(/signature=(.)/, (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    expect((await t.app.inject({ method: 'GET', url: url.pathname + forged })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: url.pathname })).statusCode).toBe(403);
    t.clock.advance(61 * 60_000);
    const expired = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(expired.statusCode).toBe(403);
    expect(expired.body).toContain('Preview link expired');
  });

  it('refuses a version without content (409), another tenant’s (404), no key (401)', async () => {
    const { pageId, audienceId, v2 } = await audienceWithDraft(alice);
    const queued = (await newVersion(alice, pageId, audienceId)).json();
    const res = await post(alice, pageId, audienceId, queued.versionId, 'preview');
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('version_not_previewable');
    expect((await post(bob, pageId, audienceId, v2, 'preview')).statusCode).toBe(404);
    expect((await post(null, pageId, audienceId, v2, 'preview')).statusCode).toBe(401);
  });
});

describe('review before live', () => {
  it('is false by default (today’s behaviour: a published page takes new versions live)', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'published' });
    expect((await t.request(alice, { method: 'GET', url: '/v0/pages' })).json().items[0]).toMatchObject({
      pageId,
      reviewBeforePublish: false,
    });
  });
});

describe('CLI: audience create, version publish, version preview', () => {
  const cli = (path: string[], values: Record<string, unknown>, positionals: string[] = []) => {
    const command = audiencesCommands.find((c) => c.path.join(' ') === path.join(' '))!;
    const ctx = {
      database: t.database,
      db: t.database.kysely,
      config: t.app.ctx.config,
      clock: t.clock,
    } as unknown as CliContext;
    return command.run(ctx, { values, positionals });
  };

  it('creates an audience, publishes its draft, rolls back, and makes a preview URL that works', async () => {
    const pageId = await makePage(alice.scope, t.clock, { title: 'Cli' });
    const audience = await cli(['audience', 'create'], { tenant: alice.tenantId, page: pageId, name: 'From the CLI' });
    expect(audience).toMatchObject({ customName: 'From the CLI', status: 'queued' });
    await drainGeneration(t.database, t.clock);
    const versions = (await list(alice, pageId, audience.audienceId as string)).json().items;
    const published = await cli(['version', 'publish'], { tenant: alice.tenantId }, [versions[0].versionId]);
    expect(published).toMatchObject({ versionNumber: 2, status: 'published', rolledBackFrom: null });
    const rolled = await cli(['version', 'publish'], { tenant: alice.tenantId }, [versions[1].versionId]);
    expect(rolled).toMatchObject({ versionNumber: 3, status: 'published', rolledBackFrom: versions[1].versionId });
    const preview = await cli(['version', 'preview'], { tenant: alice.tenantId }, [versions[0].versionId]);
    const url = new URL(preview.previewUrl as string);
    expect((await t.app.inject({ method: 'GET', url: url.pathname + url.search })).statusCode).toBe(200);
    await expect(
      cli(['audience', 'create'], { tenant: alice.tenantId, page: pageId, 'route-key': '..' }),
    ).rejects.toThrow(/personRouteKey/);
  });
});
