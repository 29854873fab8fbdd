import PQueue from 'p-queue';
import sharp from 'sharp';
import { AppError } from '../../http/errors.js';

/** The image types the service accepts, recognized by their first bytes (docs/api.md, Files). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** 10 MiB: the largest file accepted. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/**
 * Decoded size cap, 4096 × 4096 (16,777,216 px, 64 MiB as RGBA; all frames of an animation together): more than any page image needs
 * (a full-width image on a 5K screen is 14.7 Mpx), and it refuses decompression bombs that fit in
 * 10 MiB.
 */
export const MAX_IMAGE_PIXELS = 4096 * 4096;

/**
 * Full decodes (upload checks and previews) in flight at once in this process; the others wait
 * in line. Each may hold up to 64 MiB of pixels and a core, and upload URLs are outside /v0's
 * rate limit: the line keeps memory and CPU bounded whoever sends (FILE_DECODE_CONCURRENCY).
 */
export const imageDecodes = new PQueue({ concurrency: 2 });

/** Sets how many decodes run at once (FILE_DECODE_CONCURRENCY; per process). */
export function limitImageDecodes(concurrency: number): void {
  imageDecodes.concurrency = concurrency;
}
/** Previews fit in this square, never enlarged. */
const PREVIEW_SIZE = 512;
export const PREVIEW_TYPE = 'image/webp';

const SHARP_FORMAT: Record<ImageType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'heif',
};

function startsWith(bytes: Buffer, signature: number[], offset = 0): boolean {
  return bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b);
}

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The image type of `bytes` by its magic number, or null when it is none of the accepted ones. */
export function sniffImageType(bytes: Buffer): ImageType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(bytes, ascii('ftyp'), 4)) {
    // ISO BMFF: the major brand and the compatible brands of the `ftyp` box.
    const boxSize = Math.min(bytes.readUInt32BE(0), bytes.length, 256);
    for (let at = 8; at + 4 <= boxSize; at += 4) {
      if (at === 12) continue; // minor version
      const brand = bytes.toString('latin1', at, at + 4);
      if (brand === 'avif' || brand === 'avis') return 'image/avif';
    }
  }
  return null;
}

function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes.toString('utf8', 0, Math.min(bytes.length, 1024)).trimStart().toLowerCase();
  return head.startsWith('<') && head.includes('<svg');
}

function invalidImage(detail: string): AppError {
  return new AppError('invalid_image', detail, [{ path: '/body', message: detail }]);
}

export interface ImageInfo {
  contentType: ImageType;
  width: number;
  height: number;
}

/**
 * Checks that `bytes` are one whole image of the declared type: recognized by content (never by
 * the claimed type or the file name), and decoded completely, so a truncated or corrupt file is
 * refused here rather than served broken later. Throws 422 invalid_image.
 */
export async function inspectImage(bytes: Buffer, declaredType: string): Promise<ImageInfo> {
  if (bytes.length === 0) throw invalidImage('The file is empty (0 bytes).');
  const contentType = sniffImageType(bytes);
  if (contentType === null) {
    throw invalidImage(
      looksLikeSvg(bytes)
        ? 'SVG images are not accepted (they can carry script); upload a PNG, JPEG, GIF, WebP or AVIF.'
        : 'The content is not a PNG, JPEG, GIF, WebP or AVIF image.',
    );
  }
  if (contentType !== declaredType) {
    throw invalidImage(`The content is ${contentType}, but the upload was declared as ${declaredType}.`);
  }
  return imageDecodes.add(() => decodeCompletely(bytes, contentType), { throwOnTimeout: true });
}

async function decodeCompletely(bytes: Buffer, contentType: ImageType): Promise<ImageInfo> {
  try {
    const image = sharp(bytes, { failOn: 'warning', limitInputPixels: MAX_IMAGE_PIXELS });
    const metadata = await image.metadata();
    if (
      metadata.format !== SHARP_FORMAT[contentType] ||
      (contentType === 'image/avif' && metadata.compression !== 'av1')
    ) {
      throw new Error('format mismatch');
    }
    // Decodes every pixel of every frame (`animated`): a corrupt later frame of an animation fails
    // here too. The pixel limit then counts all frames together, so an animation's decoding costs
    // no more than one still image at the limit.
    await sharp(bytes, { failOn: 'warning', limitInputPixels: MAX_IMAGE_PIXELS, animated: true }).stats();
    return { contentType, width: metadata.width, height: metadata.height };
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    if (/pixel limit/i.test(message)) {
      throw invalidImage(
        `The image has more than ${MAX_IMAGE_PIXELS.toLocaleString('en')} pixels (all frames of an animation together).`,
      );
    }
    throw invalidImage(`The file is not a valid ${contentType} image (it is truncated or corrupt).`);
  }
}

/** A downscaled WebP of an accepted image (first frame of an animation; EXIF orientation applied). */
export async function makePreview(bytes: Buffer): Promise<Buffer> {
  return imageDecodes.add(
    () =>
      sharp(bytes, { failOn: 'none', limitInputPixels: MAX_IMAGE_PIXELS })
        .rotate()
        .resize(PREVIEW_SIZE, PREVIEW_SIZE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer(),
    { throwOnTimeout: true },
  );
}
