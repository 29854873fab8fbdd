import { describe, expect, it } from 'vitest';
import { makeImageFile, storedState } from '../../../test/factories/files.js';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { HOUR_MS } from '../../lib/clock.js';
import { fileRuntime } from '../files/index.js';
import { purgeDeletedAssetFiles } from './assets.purge.js';
import { liveAssetFileId } from './index.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies, checked field by field
type Json = Record<string, any>;
const call = (tenant: Tenant | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.request(tenant, { method, url, ...(payload === undefined ? {} : { payload }) });
const newAsset = async (tenant: Tenant, body: Json = {}, fileId?: string): Promise<Json> => {
  const res = await call(tenant, 'POST', '/v0/assets', {
    assetType: 'image',
    name: 'An image',
    fileId: fileId ?? (await makeImageFile(t, tenant)),
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};
const ids = (res: { json(): Json }) => res.json().items.map((a: Json) => a.assetId);

describe('GET /v0/assets (extension)', () => {
  it('lists active assets newest first; filters by lifecycle state, purpose and tag; pages by cursor', async () => {
    const tenant = await t.createTenant();
    const logo = await newAsset(tenant, { purpose: 'logo' });
    const hero = await newAsset(tenant, { purpose: 'hero', hidden: true });
    const old = await newAsset(tenant, { purpose: 'logo' });
    await call(tenant, 'PATCH', `/v0/assets/${logo.assetId}`, { tags: ['brand', 'dark'] });
    await call(tenant, 'PATCH', `/v0/assets/${hero.assetId}`, { tags: ['brand'] });
    await call(tenant, 'POST', `/v0/assets/${old.assetId}/trash`, {});

    const all = await call(tenant, 'GET', '/v0/assets');
    expect(all.statusCode).toBe(200);
    expect(ids(all)).toEqual([hero.assetId, logo.assetId]);
    expect(all.json().totalCount).toBe(2);
    expect(all.json().items[0]).toMatchObject({ hidden: true, downloadUrl: expect.stringContaining('/files/') });
    expect(ids(await call(tenant, 'GET', '/v0/assets?lifecycleState=trashed'))).toEqual([old.assetId]);
    expect(ids(await call(tenant, 'GET', '/v0/assets?purpose=logo'))).toEqual([logo.assetId]);
    expect(ids(await call(tenant, 'GET', '/v0/assets?tag=brand'))).toEqual([hero.assetId, logo.assetId]);
    expect(ids(await call(tenant, 'GET', '/v0/assets?tag=dark&purpose=logo'))).toEqual([logo.assetId]);
    // A tag matches whole: no substring, no JSON fragment.
    for (const tag of ['bra', '"brand"', 'brand,dark']) {
      expect(ids(await call(tenant, 'GET', `/v0/assets?tag=${encodeURIComponent(tag)}`))).toEqual([]);
    }

    const first = (await call(tenant, 'GET', '/v0/assets?limit=1')).json();
    expect(first).toMatchObject({ hasMore: true, totalCount: 2 });
    const second = (await call(tenant, 'GET', `/v0/assets?limit=1&cursor=${first.nextCursor}`)).json();
    expect(second.items.map((a: Json) => a.assetId)).toEqual([logo.assetId]);
    expect(second.hasMore).toBe(false);
    const other = await call(tenant, 'GET', `/v0/assets?limit=1&purpose=logo&cursor=${first.nextCursor}`);
    expect(problem(other).code).toBe('invalid_cursor');

    // Another tenant sees none of them.
    expect((await call(bob, 'GET', '/v0/assets?tag=brand')).json().items).toEqual([]);
    for (const [query, path] of [
      ['lifecycleState=gone', '/query/lifecycleState'],
      ['tag=', '/query/tag'],
      ['hidden=true', '/query/hidden'],
    ]) {
      const res = await call(tenant, 'GET', `/v0/assets?${query}`);
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors.map((e) => e.path)).toContain(path);
    }
    expect((await call(null, 'GET', '/v0/assets')).statusCode).toBe(401);
  });
});

describe('PATCH /v0/assets/{asset_id} (extension)', () => {
  it('changes name, purpose, tags (duplicates collapse) and hidden; a no-op leaves updatedAt', async () => {
    const asset = await newAsset(alice);
    t.clock.advance(60_000);
    const res = await call(alice, 'PATCH', `/v0/assets/${asset.assetId}`, {
      name: 'Renamed',
      purpose: 'logo',
      tags: ['b', 'a', 'b'],
      hidden: true,
    });
    expect(res.statusCode).toBe(200);
    const patched = res.json();
    expect(patched).toMatchObject({ name: 'Renamed', purpose: 'logo', tags: ['b', 'a'], hidden: true });
    expect(patched.updatedAt).toBe(t.clock.now().toISOString());
    expect((await call(alice, 'GET', `/v0/assets/${asset.assetId}`)).json()).toMatchObject({
      name: 'Renamed',
      tags: ['b', 'a'],
    });
    t.clock.advance(60_000);
    for (const body of [{}, { name: 'Renamed', tags: ['b', 'a'], hidden: true }]) {
      expect((await call(alice, 'PATCH', `/v0/assets/${asset.assetId}`, body)).json().updatedAt).toBe(
        patched.updatedAt,
      );
    }
  });

  it('refuses bad bodies at the field, other tenants’ ids with 404, and writes nothing', async () => {
    const asset = await newAsset(alice);
    for (const [body, path] of [
      [{ name: '' }, '/body/name'],
      [{ purpose: 'p'.repeat(1001) }, '/body/purpose'],
      [{ tags: [''] }, '/body/tags/0'],
      [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, '/body/tags'],
      [{ tags: 'brand' }, '/body/tags'],
      [{ hidden: 'yes' }, '/body/hidden'],
      [{ lifecycleState: 'trashed' }, '/body/lifecycleState'],
      [{ fileId: 'file_x' }, '/body/fileId'],
    ] as const) {
      const before = await rowCounts(alice);
      const res = await call(alice, 'PATCH', `/v0/assets/${asset.assetId}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(problem(res).errors.map((e) => e.path)).toContain(path);
      expect(await rowCounts(alice)).toEqual(before);
    }
    for (const [method, suffix, payload] of [
      ['PATCH', '', { name: 'Mine' }],
      ['POST', '/trash', {}],
      ['POST', '/restore', {}],
      ['DELETE', '', undefined],
    ] as const) {
      const res = await call(bob, method, `/v0/assets/${asset.assetId}${suffix}`, payload);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
      expect((await call(null, method, `/v0/assets/${asset.assetId}${suffix}`, payload)).statusCode).toBe(401);
    }
    expect((await call(alice, 'GET', `/v0/assets/${asset.assetId}`)).json()).toEqual({
      ...asset,
      downloadUrl: expect.any(String),
    });
  });
});

describe('asset lifecycle: trash, restore, delete (extension)', () => {
  it('active → trashed → active; trashed and deleted assets are not served on pages', async () => {
    const asset = await newAsset(alice);
    const fileId = asset.data.fileId;
    expect(await liveAssetFileId(alice.scope, asset.assetId)).toBe(fileId);

    t.clock.advance(1000);
    const trashed = (await call(alice, 'POST', `/v0/assets/${asset.assetId}/trash`, {})).json();
    expect(trashed).toMatchObject({ lifecycleState: 'trashed', trashedAt: t.clock.now().toISOString() });
    expect(trashed.downloadUrl).toEqual(expect.any(String));
    expect(await liveAssetFileId(alice.scope, asset.assetId)).toBeNull();
    // Idempotent: trashing again changes nothing.
    t.clock.advance(1000);
    expect((await call(alice, 'POST', `/v0/assets/${asset.assetId}/trash`, {})).json()).toEqual(trashed);

    const restored = (await call(alice, 'POST', `/v0/assets/${asset.assetId}/restore`, {})).json();
    expect(restored).toMatchObject({ lifecycleState: 'active', trashedAt: null });
    expect(await liveAssetFileId(alice.scope, asset.assetId)).toBe(fileId);
    expect((await call(alice, 'POST', `/v0/assets/${asset.assetId}/restore`, {})).json()).toEqual(restored);

    const deleted = await call(alice, 'DELETE', `/v0/assets/${asset.assetId}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toMatchObject({
      lifecycleState: 'deleted',
      deletedAt: t.clock.now().toISOString(),
      downloadUrl: null,
      previewDownloadUrl: null,
    });
    expect(await liveAssetFileId(alice.scope, asset.assetId)).toBeNull();
    // Shown as deleted, listed only when asked for, final.
    expect((await call(alice, 'GET', `/v0/assets/${asset.assetId}`)).json()).toEqual(deleted.json());
    expect(ids(await call(alice, 'GET', '/v0/assets?lifecycleState=deleted'))).toContain(asset.assetId);
    expect(ids(await call(alice, 'GET', '/v0/assets'))).not.toContain(asset.assetId);
    expect((await call(alice, 'DELETE', `/v0/assets/${asset.assetId}`)).json()).toEqual(deleted.json());
    for (const [method, suffix, payload] of [
      ['POST', '/restore', {}],
      ['POST', '/trash', {}],
      ['PATCH', '', { name: 'Back?' }],
    ] as const) {
      const before = await rowCounts(alice);
      const res = await call(alice, method, `/v0/assets/${asset.assetId}${suffix}`, payload);
      expect(res.statusCode).toBe(409);
      expect(problem(res).code).toBe('asset_deleted');
      expect(await rowCounts(alice)).toEqual(before);
    }
    // A deleted asset is no parent for a new one.
    const child = await call(alice, 'POST', '/v0/assets', {
      assetType: 'image',
      name: 'Child',
      fileId,
      parentAssetId: asset.assetId,
    });
    expect(problem(child).errors[0]?.path).toBe('/body/parentAssetId');
  });

  it('removes the bytes after the grace period, only once no other asset uses the file', async () => {
    const { store } = await fileRuntime(t.app.ctx);
    const purge = () => purgeDeletedAssetFiles(t.database.kysely, store, t.clock, 168 * HOUR_MS);
    t.clock.advance(200 * HOUR_MS);
    await purge(); // what earlier tests deleted
    const shared = await makeImageFile(t, alice);
    const a = await newAsset(alice, {}, shared);
    const b = await newAsset(alice, {}, shared);
    const alone = await newAsset(alice);
    const before = await storedState(t);

    await call(alice, 'DELETE', `/v0/assets/${a.assetId}`);
    await call(alice, 'DELETE', `/v0/assets/${alone.assetId}`);
    t.clock.advance(167 * HOUR_MS);
    expect(await purge()).toBe(0);
    t.clock.advance(2 * HOUR_MS);
    // `alone` is past its grace; the shared file is still b's.
    expect(await purge()).toBe(1);
    expect((await storedState(t)).completedFiles).toBe(before.completedFiles - 1);
    const url = new URL((await call(alice, 'GET', `/v0/assets/${b.assetId}`)).json().downloadUrl);
    expect((await t.request(null, { method: 'GET', url: url.pathname + url.search })).statusCode).toBe(200);
    // A purged file backs no new asset.
    const reuse = await call(alice, 'POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: alone.data.fileId });
    expect(problem(reuse).errors[0]?.path).toBe('/body/fileId');

    await call(alice, 'DELETE', `/v0/assets/${b.assetId}`);
    t.clock.advance(169 * HOUR_MS);
    expect(await purge()).toBe(1);
    const after = await storedState(t);
    expect(after.completedFiles).toBe(before.completedFiles - 2);
    expect(after.blobs + after.diskFiles).toBeLessThan(before.blobs + before.diskFiles);
  });
});
