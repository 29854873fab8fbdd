import sharp from 'sharp';
import type { DemoContext } from '../module.js';
import { createFileStore, generatePreviewNow, uploadFile } from '../files/index.js';
import { createAsset, type FileLinks } from './assets.service.js';

/** A 320×200 diagonal gradient in the given colours, as raw RGB pixels. */
function gradient(from: [number, number, number], to: [number, number, number]): sharp.Sharp {
  const width = 320;
  const height = 200;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x / width + y / height) / 2;
      for (let c = 0; c < 3; c++) pixels[(y * width + x) * 3 + c] = Math.round(from[c]! + (to[c]! - from[c]!) * t);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } });
}

/** The demo's images, made here (no files shipped): a logo, a hero photo and a hidden variant. */
async function demoImages() {
  return {
    logo: { filename: 'northwind-logo.png', bytes: await gradient([12, 74, 110], [56, 189, 248]).png().toBuffer() },
    hero: {
      filename: 'hero.jpg',
      bytes: await gradient([251, 146, 60], [190, 24, 93]).jpeg({ quality: 85 }).toBuffer(),
    },
    heroSmall: {
      filename: 'hero-small.webp',
      bytes: await gradient([251, 146, 60], [190, 24, 93]).resize(160).webp().toBuffer(),
    },
  };
}

const noLinks: FileLinks = { download: () => '', preview: () => '' };

export async function assetsDemo(ctx: DemoContext) {
  const { scope, clock } = ctx;
  const store = createFileStore(ctx.config, scope.unscopedDb(), clock);
  const images = await demoImages();
  const fileIds: Record<string, string> = {};
  for (const [name, image] of Object.entries(images)) {
    const uploaded = await uploadFile(scope, store, clock, image);
    await generatePreviewNow(scope, store, uploaded.fileId);
    fileIds[name] = uploaded.fileId;
  }
  const create = async (input: Parameters<typeof createAsset>[2]) =>
    (await createAsset(scope, clock, input, noLinks)).body.assetId;
  const logo = await create({ assetType: 'image', name: 'Northwind logo', purpose: 'logo', fileId: fileIds.logo! });
  const hero = await create({ assetType: 'image', name: 'Pricing hero', purpose: 'hero', fileId: fileIds.hero! });
  const heroSmall = await create({
    assetType: 'image',
    name: 'Pricing hero (small)',
    purpose: 'thumbnail',
    fileId: fileIds.heroSmall!,
    parentAssetId: hero,
    hidden: true,
  });
  return { assetIds: [logo, hero, heroSmall], fileIds: Object.values(fileIds) };
}
