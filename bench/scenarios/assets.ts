import path from 'node:path';
import sharp from 'sharp';
import { uploadFile } from '../../src/modules/files/files.service.js';
import { DiskFileStore } from '../../src/modules/files/files.storage.js';
import { json } from '../../src/db/json.js';
import { newId } from '../../src/lib/ids.js';
import type { BenchScenario } from '../lib.js';

const ASSETS = 10_000;
const FILES = 20;

/** Assets and topics: single-asset reads (URL signing included), signed downloads, creations. */
export const assetsScenario: BenchScenario = {
  name: 'assets',
  async run(ctx) {
    const tenant = await ctx.createTenant('bench assets');
    // The service runs on ctx.dataDir with FILE_STORAGE=disk (SQLite), so files land where it reads.
    const store = new DiskFileStore(path.join(ctx.dataDir, 'files'));
    const fileIds: string[] = [];
    for (let i = 0; i < FILES; i++) {
      const bytes = await sharp({
        create: { width: 400, height: 300, channels: 3, background: { r: (i * 37) % 256, g: 120, b: 200 } },
      })
        .jpeg()
        .toBuffer();
      fileIds.push((await uploadFile(tenant.scope, store, ctx.clock, { filename: `bench-${i}.jpg`, bytes })).fileId);
    }

    const now = ctx.clock.now().toISOString();
    const assetIds = Array.from({ length: ASSETS }, () => newId('asset'));
    await tenant.scope.transaction(async (tx) => {
      for (let i = 0; i < ASSETS; i += 500) {
        await tx
          .insertInto(
            'assets',
            assetIds.slice(i, i + 500).map((id, j) => ({
              id,
              asset_type: 'image',
              name: `Bench asset ${i + j}`,
              purpose: 'bench',
              file_id: fileIds[(i + j) % FILES]!,
              parent_asset_id: null,
              hidden: false,
              tags: json([]),
              ai_description: null,
              lifecycle_state: 'active',
              created_at: now,
              updated_at: now,
              trashed_at: null,
              deleted_at: null,
            })),
          )
          .execute();
      }
    });

    await ctx.load({
      name: `GET /v0/assets/{id} (${ASSETS.toLocaleString('en')} assets)`,
      path: '',
      paths: assetIds.slice(0, 1000).map((id) => `/v0/assets/${id}`),
      apiKey: tenant.apiKey,
    });

    const asset = (await (
      await fetch(`${ctx.service.baseUrl}/v0/assets/${assetIds[0]}`, { headers: { 'x-api-key': tenant.apiKey } })
    ).json()) as { downloadUrl: string };
    const download = new URL(asset.downloadUrl);
    await ctx.load({ name: 'GET signed downloadUrl (JPEG from disk)', path: `${download.pathname}${download.search}` });

    await ctx.load({
      name: 'POST /v0/assets',
      method: 'POST',
      path: '/v0/assets',
      body: (i: number) => ({ assetType: 'image', name: `Created ${i}`, fileId: fileIds[i % FILES] }),
      apiKey: tenant.apiKey,
      noCeiling: true,
    });
    await ctx.load({
      name: 'POST /v0/topics',
      method: 'POST',
      path: '/v0/topics',
      body: (i: number) => ({ title: `Topic ${i}` }),
      apiKey: tenant.apiKey,
      noCeiling: true,
    });
  },
};
