import { beforeAll, describe, expect, it } from 'vitest';
import { makeImageFile, startUpload, storedState } from '../../../test/factories/files.js';
import { problem, startTestApp, useTestApp, type Tenant } from '../../../test/harness.js';
import { fileRuntime } from '../files/index.js';
import { assetsDemo } from './assets.demo.js';
import { describePendingAssets, type ImageDescriber } from './assets.describer.js';
import { generatePreviewNow } from '../files/index.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

let aliceFile: string;
let bobFile: string;

beforeAll(async () => {
  aliceFile = await makeImageFile(t, alice);
  bobFile = await makeImageFile(t, bob);
});

const post = (tenant: Tenant, body: Record<string, unknown>) =>
  t.request(tenant, { method: 'POST', url: '/v0/assets', payload: body });

const idempotencyRows = async () =>
  Number(
    (
      await t.database.kysely
        .selectFrom('idempotency_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /v0/assets', () => {
  it('creates an image asset with the documented defaults', async () => {
    const res = await post(alice, { assetType: 'image', name: 'Logo', fileId: aliceFile });
    expect(res.statusCode, res.body).toBe(201);
    const asset = res.json();
    expect(asset).toMatchObject({
      tenantId: alice.tenantId,
      name: 'Logo',
      purpose: '',
      tags: [],
      aiDescription: null,
      parentAssetId: null,
      hidden: false,
      data: { type: 'image', fileId: aliceFile },
      trashedAt: null,
      deletedAt: null,
      lifecycleState: 'active',
      previewDownloadUrl: null,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    expect(asset.assetId).toMatch(/^asset_[0-9a-z]{26}$/);
    expect(asset.downloadUrl).toMatch(
      new RegExp(`^http://localhost(:80)?/files/${aliceFile}\\?expires=\\d+&signature=`),
    );

    const got = await t.request(alice, { method: 'GET', url: `/v0/assets/${asset.assetId}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(asset);
  });

  it('keeps purpose, hidden and a parent asset of the tenant; files can back several assets', async () => {
    const parent = (await post(alice, { assetType: 'image', name: 'Hero', fileId: aliceFile })).json();
    const res = await post(alice, {
      assetType: 'image',
      name: 'Hero (small)',
      purpose: 'thumbnail',
      fileId: aliceFile,
      parentAssetId: parent.assetId,
      hidden: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ purpose: 'thumbnail', hidden: true, parentAssetId: parent.assetId });
  });

  it('gives previewDownloadUrl once the preview exists', async () => {
    const fileId = await makeImageFile(t, alice);
    const { assetId } = (await post(alice, { assetType: 'image', name: 'P', fileId })).json();
    await generatePreviewNow(alice.scope, (await fileRuntime(t.app.ctx)).store, fileId);
    const asset = (await t.request(alice, { method: 'GET', url: `/v0/assets/${assetId}` })).json();
    expect(asset.previewDownloadUrl).toMatch(new RegExp(`/files/${fileId}/preview\\?expires=\\d+&signature=`));
  });

  it('uses PUBLIC_BASE_URL for its URLs when set', async () => {
    const other = await startTestApp({ config: { PUBLIC_BASE_URL: 'https://pages.example.com/' } });
    try {
      const tenant = await other.createTenant();
      const fileId = await makeImageFile(other, tenant);
      const res = await other.request(tenant, {
        method: 'POST',
        url: '/v0/assets',
        payload: { assetType: 'image', name: 'L', fileId },
      });
      expect(res.json().downloadUrl).toMatch(new RegExp(`^https://pages\\.example\\.com/files/${fileId}\\?`));
    } finally {
      await other.close();
    }
  });

  describe('refuses bad input with 422 and writes nothing', () => {
    const cases: [string, () => Record<string, unknown> | Promise<Record<string, unknown>>, string][] = [
      ['assetType video', () => ({ assetType: 'video', name: 'Clip', fileId: aliceFile }), '/body/assetType'],
      ['an empty name', () => ({ assetType: 'image', name: '', fileId: aliceFile }), '/body/name'],
      ['a name over 255', () => ({ assetType: 'image', name: 'n'.repeat(256), fileId: aliceFile }), '/body/name'],
      ['no fileId', () => ({ assetType: 'image', name: 'Logo' }), '/body/fileId'],
      ['a fileId of another tenant', () => ({ assetType: 'image', name: 'Logo', fileId: bobFile }), '/body/fileId'],
      [
        'an unknown fileId',
        () => ({ assetType: 'image', name: 'Logo', fileId: 'file_01h2xcejqtf2nbrexx3vqjhp41' }),
        '/body/fileId',
      ],
      [
        'a fileId whose upload never completed',
        async () => ({
          assetType: 'image',
          name: 'Logo',
          fileId: (await startUpload(t, alice, { size: 10 })).fileId,
        }),
        '/body/fileId',
      ],
      [
        'a parentAssetId of another tenant',
        async () => {
          const bobs = (await post(bob, { assetType: 'image', name: 'B', fileId: bobFile })).json();
          return { assetType: 'image', name: 'Child', fileId: aliceFile, parentAssetId: bobs.assetId };
        },
        '/body/parentAssetId',
      ],
      [
        'an empty idempotencyKey',
        () => ({ assetType: 'image', name: 'Logo', fileId: aliceFile, idempotencyKey: '' }),
        '/body/idempotencyKey',
      ],
      [
        'an idempotencyKey over 255',
        () => ({ assetType: 'image', name: 'Logo', fileId: aliceFile, idempotencyKey: 'k'.repeat(256) }),
        '/body/idempotencyKey',
      ],
      [
        'hidden as a string',
        () => ({ assetType: 'image', name: 'Logo', fileId: aliceFile, hidden: 'yes' }),
        '/body/hidden',
      ],
      ['a response field', () => ({ assetType: 'image', name: 'Logo', fileId: aliceFile, tags: [] }), '/body/tags'],
    ];

    it.each(cases)('%s', async (_name, makeBody, field) => {
      const body = await makeBody();
      const before = { stored: await storedState(t), keys: await idempotencyRows() };
      const res = await post(alice, {
        ...body,
        idempotencyKey: body.idempotencyKey ?? `key-${field}-${Math.random()}`,
      });
      expect(res.statusCode, res.body).toBe(422);
      const p = problem(res);
      expect(p.code).toBe('validation_failed');
      expect(p.errors.map((e) => e.path)).toContain(field);
      expect({ stored: await storedState(t), keys: await idempotencyRows() }).toEqual(before);
    });
  });

  describe('idempotencyKey', () => {
    it('returns the first result for a repeat and creates one asset', async () => {
      const body = { assetType: 'image', name: 'Once', fileId: aliceFile, idempotencyKey: 'create-once' };
      const first = await post(alice, body);
      expect(first.statusCode).toBe(201);
      const before = await storedState(t);
      const again = await post(alice, { ...body, purpose: '' }); // the default, so the same request
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      expect(await storedState(t)).toEqual(before);
    });

    it('refuses the key with a different body (422 idempotency_key_reused)', async () => {
      const body = { assetType: 'image', name: 'First', fileId: aliceFile, idempotencyKey: 'reused' };
      expect((await post(alice, body)).statusCode).toBe(201);
      const before = await storedState(t);
      const res = await post(alice, { ...body, name: 'Second' });
      expect(res.statusCode).toBe(422);
      expect(problem(res).code).toBe('idempotency_key_reused');
      expect(await storedState(t)).toEqual(before);
    });

    it('keeps keys per tenant, and a refused request leaves its key free', async () => {
      const key = 'shared-key';
      const refused = await post(alice, { assetType: 'image', name: 'X', fileId: bobFile, idempotencyKey: key });
      expect(refused.statusCode).toBe(422);
      const ok = await post(alice, { assetType: 'image', name: 'X', fileId: aliceFile, idempotencyKey: key });
      expect(ok.statusCode).toBe(201);
      const bobs = await post(bob, { assetType: 'image', name: 'X', fileId: bobFile, idempotencyKey: key });
      expect(bobs.statusCode).toBe(201);
      expect(bobs.json().assetId).not.toBe(ok.json().assetId);
    });
  });
});

describe('GET /v0/assets/{asset_id}', () => {
  it('is 404 for unknown ids and for another tenant’s asset', async () => {
    const bobs = (await post(bob, { assetType: 'image', name: 'B', fileId: bobFile })).json();
    for (const id of [bobs.assetId, 'asset_01h2xcejqtf2nbrexx3vqjhp41', 'nonsense']) {
      const res = await t.request(alice, { method: 'GET', url: `/v0/assets/${id}` });
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });
});

describe('aiDescription with a pluggable image describer', () => {
  const describeAll = async (describer: ImageDescriber) => {
    const { store } = await fileRuntime(t.app.ctx);
    while ((await describePendingAssets(t.database.kysely, store, describer, t.clock)) > 0);
  };
  const getAsset = async (assetId: string) =>
    (await t.request(alice, { method: 'GET', url: `/v0/assets/${assetId}` })).json();

  it('is filled in by the describer, which sees the image bytes', async () => {
    const { assetId } = (await post(alice, { assetType: 'image', name: 'Team photo', fileId: aliceFile })).json();
    expect(t.notified).toContain('assets');
    const seen: string[] = [];
    t.clock.advance(1000);
    await describeAll({
      describe: async (image) => {
        seen.push(image.contentType);
        expect(image.bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
        return `  A picture named ${image.name}  `;
      },
    });
    expect(seen).toContain('image/png');
    const asset = await getAsset(assetId);
    expect(asset.aiDescription).toBe('A picture named Team photo');
    expect(asset.updatedAt).toBe(t.clock.now().toISOString());
  });

  it('stays null when the describer fails, and the asset is not retried', async () => {
    const { assetId } = (await post(alice, { assetType: 'image', name: 'Broken', fileId: aliceFile })).json();
    await describeAll({
      describe: async () => {
        throw new Error('model unavailable');
      },
    });
    await describeAll({ describe: async () => 'late' });
    expect((await getAsset(assetId)).aiDescription).toBeNull();
  });
});

describe('demo', () => {
  it('creates assets from images it makes itself, previews ready', async () => {
    const tenant = await t.createTenant('Demo');
    const { assetIds } = await assetsDemo({
      scope: tenant.scope,
      clock: t.clock,
      config: t.app.ctx.config,
      created: {},
    });
    expect(assetIds).toHaveLength(3);
    const assets = await Promise.all(
      assetIds.map(async (id) => (await t.request(tenant, { method: 'GET', url: `/v0/assets/${id}` })).json()),
    );
    expect(assets.every((a) => a.previewDownloadUrl !== null && a.downloadUrl !== null)).toBe(true);
    expect(assets[2]).toMatchObject({ hidden: true, parentAssetId: assetIds[1] });
    const download = await t.app.inject({
      method: 'GET',
      url: new URL(assets[0].downloadUrl).pathname + new URL(assets[0].downloadUrl).search,
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('image/png');
  });
});
