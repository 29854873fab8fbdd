import sharp from 'sharp';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeImage, PDF_BYTES, pathOf, putBytes, startUpload, storedState } from '../../../test/factories/files.js';
import { problem, useTestApp } from '../../../test/harness.js';
import { imageDecodes, inspectImage, MAX_IMAGE_PIXELS } from './files.images.js';
import { fileRuntime, type FileRuntime } from './files.runtime.js';
import { MAX_UPLOAD_ATTEMPTS, processPendingPreviews } from './files.service.js';
import { BLOB_CHUNK_BYTES, DatabaseFileStore } from './files.storage.js';

// Issue 10, item 11: what one upload URL (outside /v0 and its rate limit) may cost the service.
const t = useTestApp({ tenants: ['Alice'], config: { FILE_DECODE_CONCURRENCY: '2' } });
const [alice] = t.tenants;

let runtime: FileRuntime;
beforeAll(async () => {
  runtime = await fileRuntime(t.app.ctx);
});

const plain = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3366aa' } })
    .png()
    .toBuffer();

describe('the pixel cap', () => {
  it(`is ${MAX_IMAGE_PIXELS.toLocaleString('en')} pixels (4096 × 4096)`, async () => {
    expect(MAX_IMAGE_PIXELS).toBe(16_777_216);
    const over = await plain(4097, 4096);
    const refused = await startUpload(t, alice!, { size: over.length });
    const before = await storedState(t);
    const res = await putBytes(t, refused.uploadUrl, over);
    expect(res.statusCode, res.body).toBe(422);
    expect(problem(res)).toMatchObject({ code: 'invalid_image', detail: expect.stringMatching(/16,777,216 pixels/) });
    expect(await storedState(t)).toEqual(before);

    const atCap = await plain(4096, 4096);
    const accepted = await startUpload(t, alice!, { size: atCap.length });
    expect((await putBytes(t, accepted.uploadUrl, atCap)).statusCode).toBe(200);
  });
});

describe('failed attempts per upload URL', () => {
  it(`takes ${MAX_UPLOAD_ATTEMPTS} PUTs, then answers 410 upload_attempts_exhausted without reading on`, async () => {
    const png = await makeImage('png');
    const { uploadUrl, fileId } = await startUpload(t, alice!, { size: png.length });
    for (let i = 0; i < MAX_UPLOAD_ATTEMPTS; i++)
      expect((await putBytes(t, uploadUrl, PDF_BYTES)).statusCode).toBe(422);
    const before = await storedState(t);
    const decode = vi.spyOn(sharp.prototype, 'metadata');
    const res = await putBytes(t, uploadUrl, png);
    expect(res.statusCode, res.body).toBe(410);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(problem(res)).toMatchObject({ code: 'upload_attempts_exhausted' });
    expect(decode).not.toHaveBeenCalled();
    decode.mockRestore();
    expect(await storedState(t)).toEqual(before);
    const row = await t.database.kysely
      .selectFrom('files')
      .select(['status', 'upload_attempts'])
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending', upload_attempts: MAX_UPLOAD_ATTEMPTS });
  });

  it('holds under concurrent PUTs: at most the limit get past the count', async () => {
    const png = await makeImage('png');
    const { uploadUrl } = await startUpload(t, alice!, { size: png.length });
    const results = await Promise.all(Array.from({ length: 12 }, () => putBytes(t, uploadUrl, PDF_BYTES)));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 422)).toHaveLength(MAX_UPLOAD_ATTEMPTS);
    expect(statuses.filter((s) => s === 410)).toHaveLength(12 - MAX_UPLOAD_ATTEMPTS);
  });

  it('a completed upload still answers 409 upload_already_completed', async () => {
    const png = await makeImage('png');
    const { uploadUrl } = await startUpload(t, alice!, { size: png.length });
    expect((await putBytes(t, uploadUrl, png)).statusCode).toBe(200);
    expect(problem(await putBytes(t, uploadUrl, png)).code).toBe('upload_already_completed');
  });
});

describe('concurrent image decodes', () => {
  it('run at most FILE_DECODE_CONCURRENCY at once; the others wait in line', async () => {
    expect(imageDecodes.concurrency).toBe(2);
    const image = await makeImage('png', { width: 1200, height: 1200 });
    let running = 0;
    let waiting = 0;
    const sample = setInterval(() => {
      running = Math.max(running, imageDecodes.pending);
      waiting = Math.max(waiting, imageDecodes.size);
    }, 1);
    try {
      await Promise.all(Array.from({ length: 6 }, () => inspectImage(image, 'image/png')));
    } finally {
      clearInterval(sample);
    }
    expect(running).toBeLessThanOrEqual(2);
    expect(running).toBeGreaterThan(0);
    expect(waiting).toBeGreaterThan(0);
  });
});

describe('downloads are streamed', () => {
  it('serves a file and its preview without reading them whole into memory', async () => {
    const jpeg = await makeImage('jpeg', { width: 1200, height: 600 });
    const { uploadUrl } = await startUpload(t, alice!, { size: jpeg.length, contentType: 'image/jpeg' });
    expect((await putBytes(t, uploadUrl, jpeg, 'image/jpeg')).statusCode).toBe(200);
    while ((await processPendingPreviews(t.database.kysely, runtime.store)) > 0);
    const asset = (
      await t.request(alice!, {
        method: 'POST',
        url: '/v0/assets',
        payload: { assetType: 'image', name: 'Photo', fileId: new URL(uploadUrl).pathname.split('/')[2] },
      })
    ).json() as { downloadUrl: string; previewDownloadUrl: string };

    const whole = vi.spyOn(runtime.store, 'get');
    const res = await t.app.inject({ method: 'GET', url: pathOf(asset.downloadUrl) });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(jpeg)).toBe(true);
    expect(res.headers['content-length']).toBe(String(jpeg.length));
    const preview = await t.app.inject({ method: 'GET', url: pathOf(asset.previewDownloadUrl) });
    expect(preview.statusCode).toBe(200);
    expect((await sharp(preview.rawPayload).metadata()).format).toBe('webp');
    const head = await t.app.inject({ method: 'HEAD', url: pathOf(asset.downloadUrl) });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(jpeg.length));
    expect(head.rawPayload).toHaveLength(0);
    expect(whole).not.toHaveBeenCalled();
    whole.mockRestore();
  });

  it('the database store reads a blob chunk by chunk', async () => {
    const store = new DatabaseFileStore(t.database.kysely, t.clock);
    const bytes = Buffer.from(Array.from({ length: 2 * BLOB_CHUNK_BYTES + 1000 }, (_, i) => (i * 31) % 256));
    await store.put('tenant_x/file_x/chunked', bytes);
    const opened = await store.open('tenant_x/file_x/chunked');
    expect(opened!.size).toBe(bytes.length);
    const chunks: Buffer[] = [];
    for await (const chunk of opened!.stream) chunks.push(chunk as Buffer);
    expect(chunks.map((c) => c.length)).toEqual([BLOB_CHUNK_BYTES, BLOB_CHUNK_BYTES, 1000]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(await store.open('tenant_x/file_x/missing')).toBeNull();
    await store.delete('tenant_x/file_x/chunked');
  });
});
