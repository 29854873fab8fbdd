import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../http/errors.js';
import { inspectImage } from './files.images.js';

/** A three-frame animated GIF, 64 × 48 per frame (deterministic noise, a different pattern per frame). */
async function animatedGif(): Promise<Buffer> {
  const frames = await Promise.all(
    [3, 5, 7].map((k) => {
      const pixels = Buffer.from(Array.from({ length: 64 * 48 * 3 }, (_, i) => (i * k + (i >> 4)) % 251));
      return sharp(pixels, { raw: { width: 64, height: 48, channels: 3 } })
        .png()
        .toBuffer();
    }),
  );
  return sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer();
}

describe('inspectImage on animations (docs/api.md, Files: every pixel of every frame is decoded)', () => {
  it('accepts a whole animation, with the size of one frame', async () => {
    const gif = await animatedGif();
    expect(await sharp(gif).metadata()).toMatchObject({ pages: 3 });
    expect(await inspectImage(gif, 'image/gif')).toEqual({ contentType: 'image/gif', width: 64, height: 48 });
  });

  it('refuses an animation whose later frame is corrupt, though its first frame decodes', async () => {
    const gif = await animatedGif();
    const corrupt = Buffer.from(gif);
    const at = Math.floor(gif.length * 0.85); // inside the last frame's data
    for (let i = 0; i < 40; i++) corrupt[at + i]! ^= 0x5a;
    await expect(sharp(corrupt, { failOn: 'warning' }).stats()).resolves.toBeDefined(); // the first frame alone is fine
    const refused = await inspectImage(corrupt, 'image/gif').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('invalid_image');
  });
});
