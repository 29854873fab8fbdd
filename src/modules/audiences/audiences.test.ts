import { describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { archiveAudience } from './audiences.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const list = (tenant: Tenant, pageId: string, query = '') =>
  t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences${query}` });
const restore = (tenant: Tenant, pageId: string, audienceId: string, payload: unknown = {}) =>
  t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/${audienceId}/restore`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
const createVersion = (tenant: Tenant, pageId: string, audienceId: string, payload: unknown = {}) =>
  t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });

/** Everything an audience request could write, to prove a refused request wrote nothing. */
async function snapshot(tenant: Tenant) {
  const count = async (table: 'audience_versions' | 'events' | 'audiences') =>
    Number(
      (
        await tenant.scope
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const audiences = await tenant.scope.selectFrom('audiences').select(['id', 'archived_at']).orderBy('id').execute();
  const versions = await tenant.scope.selectFrom('audience_versions').select(['id', 'status']).orderBy('id').execute();
  return {
    versions: await count('audience_versions'),
    events: await count('events'),
    audiences,
    versionRows: versions,
  };
}

describe('GET /v0/pages/{page_id}/audiences', () => {
  it('lists the page’s audiences newest first with their latest and published versions', async () => {
    const pageId = await makePage(alice.scope, t.clock, {
      metadata: { title: 'Page title', description: 'Page description' },
    });
    const first = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'First' });
    t.clock.advance(1000);
    const second = await makeAudience(alice.scope, t.clock, {
      pageId,
      computedName: 'Second',
      customName: 'Custom second',
      metadataOverride: { title: 'Audience title' },
    });
    await makeAudience(alice.scope, t.clock, { computedName: 'Other page' });

    const res = await list(alice, pageId);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ hasMore: false, nextCursor: null, totalCount: 2 });
    expect(body.items.map((a: { audienceId: string }) => a.audienceId)).toEqual([second.audienceId, first.audienceId]);
    const [s, f] = body.items;
    expect(s).toMatchObject({
      pageId,
      status: 'published',
      computedName: 'Second',
      customName: 'Custom second',
      effectiveName: 'Custom second',
      archivedAt: null,
      metadataOverride: { title: 'Audience title' },
      effectiveMetadata: { title: 'Audience title', description: 'Page description' },
    });
    expect(f.effectiveName).toBe('First');
    expect(f.effectiveMetadata).toEqual({ title: 'Page title', description: 'Page description' });
    expect(s.latestVersion).toEqual(s.publishedVersion);
    expect(s.publishedVersion).toMatchObject({
      versionId: second.versionId,
      audienceId: second.audienceId,
      versionNumber: 1,
      status: 'published',
      queueDurationMs: 0,
      cancelledAt: null,
      obsoleteAt: null,
      archivedAt: null,
    });
    for (const field of ['queuedAt', 'becameDraftAt', 'publishedAt', 'createdAt'])
      expect(s.publishedVersion[field]).toMatch(/Z$/);

    const page = await t.request(alice, { method: 'GET', url: '/v0/pages?limit=100' });
    expect(page.json().items.find((p: { pageId: string }) => p.pageId === pageId).audiencesCount).toBe(2);
  });

  it('shows a newer version as latest while the published one stays', async () => {
    const { pageId, audienceId, versionId } = await makeAudience(alice.scope, t.clock);
    const created = await createVersion(alice, pageId, audienceId);
    const [a] = (await list(alice, pageId)).json().items;
    expect(a.status).toBe('queued');
    expect(a.latestVersion).toMatchObject({ versionId: created.json().versionId, versionNumber: 2, status: 'queued' });
    expect(a.publishedVersion).toMatchObject({ versionId, versionNumber: 1, status: 'published' });
  });

  it('walks all audiences with cursors', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await makeAudience(alice.scope, t.clock, { pageId })).audienceId);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(alice, pageId, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().items.map((a: { audienceId: string }) => a.audienceId));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('answers 404 for another tenant’s page, a deleted page and an unknown page', async () => {
    const { pageId } = await makeAudience(bob.scope, t.clock);
    const deleted = await makePage(alice.scope, t.clock, { deleted: true });
    for (const id of [pageId, deleted, 'page_01jb0000000000000000000000']) {
      const res = await list(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });
});

describe('POST /v0/pages/{page_id}/audiences/{audience_id}/restore', () => {
  it('clears archivedAt and brings back the status of the latest version', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    await createVersion(alice, pageId, audienceId);
    await archiveAudience(alice.scope, t.clock, audienceId);
    const [archived] = (await list(alice, pageId)).json().items;
    expect(archived).toMatchObject({ status: 'archived', archivedAt: expect.any(String) });

    const res = await restore(alice, pageId, audienceId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ audienceId, status: 'queued', archivedAt: null });
    expect((await list(alice, pageId)).json().items[0]).toEqual(res.json());
  });

  it('is a no-op answering 200 for an audience that is not archived', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const before = (await list(alice, pageId)).json().items[0];
    const res = await restore(alice, pageId, audienceId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(before);
  });

  it('refuses a non-object body and changes nothing', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    await archiveAudience(alice.scope, t.clock, audienceId);
    const before = await snapshot(alice);
    for (const payload of [[], 'restore', 42, null, { force: true }]) {
      const res = await restore(alice, pageId, audienceId, payload);
      expect(res.statusCode).toBe(422);
      expect(problem(res).code).toBe('validation_failed');
    }
    expect(await snapshot(alice)).toEqual(before);
  });

  it('answers 404 for an audience of another page, of another tenant, or unknown', async () => {
    const mine = await makeAudience(alice.scope, t.clock);
    const otherPage = await makeAudience(alice.scope, t.clock);
    const theirs = await makeAudience(bob.scope, t.clock);
    await archiveAudience(alice.scope, t.clock, otherPage.audienceId);
    const before = await snapshot(alice);
    for (const [pageId, audienceId] of [
      [mine.pageId, otherPage.audienceId],
      [mine.pageId, theirs.audienceId],
      [theirs.pageId, theirs.audienceId],
      [mine.pageId, 'audience_01jb0000000000000000000000'],
    ] as const) {
      const res = await restore(alice, pageId, audienceId);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect(await snapshot(alice)).toEqual(before);
  });

  it('answers 409 page_archived on an archived page', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId });
    await archiveAudience(alice.scope, t.clock, audienceId);
    await alice.scope.updateTable('pages').set({ status: 'archived' }).where('id', '=', pageId).execute();
    const res = await restore(alice, pageId, audienceId);
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('page_archived');
  });
});

describe('POST /v0/pages/{page_id}/audiences/{audience_id}/versions', () => {
  it('queues version n+1, records page.version.created and wakes the worker', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    t.notified.length = 0;
    t.clock.advance(5000);
    const res = await createVersion(alice, pageId, audienceId);
    expect(res.statusCode).toBe(201);
    const version = res.json();
    expect(version).toMatchObject({
      audienceId,
      versionNumber: 2,
      status: 'queued',
      queuedAt: t.clock.now().toISOString(),
      createdAt: t.clock.now().toISOString(),
      queueDurationMs: null,
      becameDraftAt: null,
      publishedAt: null,
      isNewPageAgent: false,
      supplementaryContext: null,
    });
    expect(t.notified).toEqual(expect.arrayContaining(['audience-versions', 'events']));
    const event = await alice.scope
      .selectFrom('events')
      .selectAll()
      .where('type', '=', 'page.version.created')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event.data).toEqual({
      versionId: version.versionId,
      audienceId,
      pageId,
      versionNumber: 2,
      status: 'queued',
      version,
    });
  });

  it('cancels older versions that were still queued', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const older = (await createVersion(alice, pageId, audienceId)).json();
    t.clock.advance(10);
    const newer = (await createVersion(alice, pageId, audienceId)).json();
    expect(newer.versionNumber).toBe(3);
    const row = await alice.scope
      .selectFrom('audience_versions')
      .select(['status', 'cancelled_at'])
      .where('id', '=', older.versionId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'cancelled', cancelled_at: t.clock.now().toISOString() });
  });

  it('returns the version an operationKey already made, and creates nothing', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const first = await createVersion(alice, pageId, audienceId, { operationKey: 'regen-42' });
    expect(first.statusCode).toBe(201);
    const before = await snapshot(alice);
    const again = await createVersion(alice, pageId, audienceId, { operationKey: 'regen-42' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(await snapshot(alice)).toEqual(before);
    // the same key on another audience is another operation
    const other = await makeAudience(alice.scope, t.clock, { pageId });
    expect((await createVersion(alice, pageId, other.audienceId, { operationKey: 'regen-42' })).statusCode).toBe(201);
  });

  it('creates one version for concurrent requests with the same operationKey', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => createVersion(alice, pageId, audienceId, { operationKey: 'burst' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.json().versionId)).size).toBe(1);
    const versions = await alice.scope
      .selectFrom('audience_versions')
      .select('id')
      .where('audience_id', '=', audienceId)
      .execute();
    expect(versions).toHaveLength(2);
  });

  it('refuses operationKey of 0 or 129 characters (and accepts 128), writing nothing', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const before = await snapshot(alice);
    for (const operationKey of ['', 'k'.repeat(129), 42]) {
      const res = await createVersion(alice, pageId, audienceId, { operationKey });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/operationKey');
    }
    const unknown = await createVersion(alice, pageId, audienceId, { priority: 'high' });
    expect(unknown.statusCode).toBe(422);
    expect(await snapshot(alice)).toEqual(before);
    expect((await createVersion(alice, pageId, audienceId, { operationKey: 'k'.repeat(128) })).statusCode).toBe(201);
  });

  it('answers 409 audience_archived for an archived audience and writes nothing', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    await archiveAudience(alice.scope, t.clock, audienceId);
    const before = await snapshot(alice);
    const res = await createVersion(alice, pageId, audienceId, { operationKey: 'new' });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('audience_archived');
    expect(await snapshot(alice)).toEqual(before);
  });

  it('answers 404 for an audience of another page or tenant, writing nothing', async () => {
    const mine = await makeAudience(alice.scope, t.clock);
    const otherPage = await makeAudience(alice.scope, t.clock);
    const theirs = await makeAudience(bob.scope, t.clock);
    const before = await snapshot(alice);
    const bobBefore = await snapshot(bob);
    for (const [pageId, audienceId] of [
      [mine.pageId, otherPage.audienceId],
      [mine.pageId, theirs.audienceId],
      [theirs.pageId, theirs.audienceId],
    ] as const) {
      const res = await createVersion(alice, pageId, audienceId);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect(await snapshot(alice)).toEqual(before);
    expect(await snapshot(bob)).toEqual(bobBefore);
  });
});
