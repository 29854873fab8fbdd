import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  makeImage,
  PDF_BYTES,
  pathOf,
  putBytes,
  startUpload,
  storedState,
  SVG_BYTES,
  uploadImage,
} from '../../../test/factories/files.js';
import { ENGINE, problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { fileCommands } from './files.cli.js';
import { MAX_FILE_BYTES, sniffImageType } from './files.images.js';
import { fileRuntime, type FileRuntime } from './files.runtime.js';
import { processPendingPreviews, pruneAbandonedUploads } from './files.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

let runtime: FileRuntime;

beforeAll(async () => {
  runtime = await fileRuntime(t.app.ctx);
});

const createAsset = async (tenant: Tenant, fileId: string) => {
  const res = await t.request(tenant, {
    method: 'POST',
    url: '/v0/assets',
    payload: { assetType: 'image', name: 'Logo', fileId },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { assetId: string; downloadUrl: string; previewDownloadUrl: string | null };
};

const get = (url: string) => t.app.inject({ method: 'GET', url: pathOf(url) });

/** Replaces one query parameter of a signed URL. */
function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

describe('POST /v0/files (extension) and the signed upload URL', () => {
  it('stores a PNG sent to the upload URL and reports what it found', async () => {
    const before = await storedState(t);
    const png = await makeImage('png');
    const { fileId, uploadUrl, expiresAt } = await startUpload(t, alice, {
      filename: 'logo.png',
      contentType: 'image/png',
      size: png.length,
    });
    expect(fileId).toMatch(/^file_[0-9a-z]{26}$/);
    expect(Date.parse(expiresAt) - t.clock.now().getTime()).toBe(15 * 60 * 1000);
    expect(new URL(uploadUrl).pathname).toBe(`/files/${fileId}`);
    expect(new URL(uploadUrl).searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const res = await putBytes(t, uploadUrl, png);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ fileId, contentType: 'image/png', size: png.length, width: 64, height: 48 });
    const after = await storedState(t);
    expect(after.completedFiles).toBe(before.completedFiles + 1);
    // The bytes are in the configured store: a folder under DATA_DIR on SQLite, the database on PostgreSQL.
    if (ENGINE === 'postgres') expect(after.blobs).toBe(before.blobs + 1);
    else expect(after.diskFiles).toBe(before.diskFiles + 1);
  });

  it.each(['png', 'jpeg', 'gif', 'webp', 'avif'] as const)('accepts %s, recognized by content', async (format) => {
    const bytes = await makeImage(format);
    const contentType = `image/${format}`;
    const { uploadUrl } = await startUpload(t, alice, { filename: `x.${format}`, contentType, size: bytes.length });
    // Content-Type of the PUT may also be application/octet-stream: the content decides.
    const res = await putBytes(t, uploadUrl, bytes, 'application/octet-stream');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().contentType).toBe(contentType);
    expect(sniffImageType(bytes)).toBe(contentType);
  });

  it.each([
    [{ size: 0 }, '/body/size'],
    [{ size: MAX_FILE_BYTES + 1 }, '/body/size'],
    [{ size: 1.5 }, '/body/size'],
    [{ contentType: 'image/svg+xml' }, '/body/contentType'],
    [{ contentType: 'application/pdf' }, '/body/contentType'],
    [{ filename: '' }, '/body/filename'],
    [{ filename: '../etc/passwd' }, '/body/filename'],
    [{ filename: 'a'.repeat(256) }, '/body/filename'],
    [{ extra: true }, '/body/extra'],
  ])('refuses %j with 422 and creates nothing', async (override, field) => {
    const count = async () =>
      Number(
        (
          await t.database.kysely
            .selectFrom('files')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const res = await t.request(alice, {
      method: 'POST',
      url: '/v0/files',
      payload: { filename: 'a.png', contentType: 'image/png', size: 100, ...override },
    });
    expect(res.statusCode).toBe(422);
    const body = problem(res);
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((e) => e.path)).toContain(field);
    expect(await count()).toBe(before);
  });

  it('needs an API key', async () => {
    const res = await t.request(null, {
      method: 'POST',
      url: '/v0/files',
      payload: { filename: 'a.png', contentType: 'image/png', size: 10 },
    });
    expect(res.statusCode).toBe(401);
  });

  describe('refuses bytes that are not the declared image, leaving nothing behind', () => {
    const cases: [string, () => Promise<{ declared: number; bytes: Buffer; type?: string }>, string, RegExp][] = [
      [
        'a PDF renamed .png',
        async () => ({ declared: PDF_BYTES.length, bytes: PDF_BYTES }),
        'invalid_image',
        /not a PNG/,
      ],
      ['a zero-byte file', async () => ({ declared: 100, bytes: Buffer.alloc(0) }), 'invalid_image', /empty/],
      [
        'a truncated PNG',
        async () => {
          const png = await makeImage('png', { width: 200, height: 200 });
          const truncated = png.subarray(0, Math.floor(png.length / 2));
          return { declared: truncated.length, bytes: truncated };
        },
        'invalid_image',
        /truncated or corrupt/,
      ],
      [
        'a JPEG declared as PNG',
        async () => {
          const jpeg = await makeImage('jpeg');
          return { declared: jpeg.length, bytes: jpeg };
        },
        'invalid_image',
        /image\/jpeg.*declared as image\/png/,
      ],
      ['an SVG', async () => ({ declared: SVG_BYTES.length, bytes: SVG_BYTES }), 'invalid_image', /SVG/],
      [
        'fewer bytes than declared',
        async () => {
          const png = await makeImage('png');
          return { declared: png.length + 1, bytes: png };
        },
        'file_size_mismatch',
        /declared with size/,
      ],
    ];

    it.each(cases)('%s', async (_name, make, code, detail) => {
      const { declared, bytes } = await make();
      const { uploadUrl } = await startUpload(t, alice, {
        filename: 'doc.png',
        contentType: 'image/png',
        size: declared,
      });
      const before = await storedState(t);
      const res = await putBytes(t, uploadUrl, bytes);
      expect(res.statusCode, res.body).toBe(422);
      const body = problem(res);
      expect(body.code).toBe(code);
      expect(body.detail).toMatch(detail);
      expect(await storedState(t)).toEqual(before);
    });

    it('lets the same URL be retried with the right bytes after a refusal', async () => {
      const png = await makeImage('png');
      const { uploadUrl } = await startUpload(t, alice, { size: png.length });
      expect((await putBytes(t, uploadUrl, PDF_BYTES)).statusCode).toBe(422);
      expect((await putBytes(t, uploadUrl, png)).statusCode).toBe(200);
    });
  });

  it('refuses a body over 10 MiB with 413 before storing anything', async () => {
    const { uploadUrl } = await startUpload(t, alice, { size: MAX_FILE_BYTES });
    const before = await storedState(t);
    const res = await putBytes(t, uploadUrl, Buffer.alloc(MAX_FILE_BYTES + 1, 1));
    expect(res.statusCode).toBe(413);
    expect(problem(res).code).toBe('payload_too_large');
    expect(await storedState(t)).toEqual(before);
  });

  it.each(['application/json', 'text/plain'])('refuses Content-Type %s with 415', async (contentType) => {
    const { uploadUrl } = await startUpload(t, alice, { size: 2 });
    const res = await putBytes(t, uploadUrl, Buffer.from('{}'), contentType);
    expect(res.statusCode).toBe(415);
    expect(problem(res).code).toBe('unsupported_media_type');
  });

  it('refuses an upload URL reused after completion (409), keeping the first file', async () => {
    const png = await makeImage('png');
    const { uploadUrl } = await startUpload(t, alice, { size: png.length });
    expect((await putBytes(t, uploadUrl, png)).statusCode).toBe(200);
    const before = await storedState(t);
    const res = await putBytes(t, uploadUrl, png);
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('upload_already_completed');
    expect(await storedState(t)).toEqual(before);
  });

  it('completes a file once when the same URL is used twice at the same time', async () => {
    const png = await makeImage('png');
    const { uploadUrl } = await startUpload(t, alice, { size: png.length });
    const before = await storedState(t);
    const results = await Promise.all([putBytes(t, uploadUrl, png), putBytes(t, uploadUrl, png)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const after = await storedState(t);
    expect(after.completedFiles).toBe(before.completedFiles + 1);
    expect(after.blobs + after.diskFiles).toBe(before.blobs + before.diskFiles + 1);
  });

  it('refuses an upload URL after it expired (403), storing nothing', async () => {
    const png = await makeImage('png');
    const { uploadUrl } = await startUpload(t, alice, { size: png.length });
    t.clock.advance(15 * 60 * 1000 + 1000);
    const before = await storedState(t);
    const res = await putBytes(t, uploadUrl, png);
    expect(res.statusCode).toBe(403);
    expect(problem(res).code).toBe('url_expired');
    expect(await storedState(t)).toEqual(before);
  });

  it('refuses tampered, missing and borrowed signatures (403)', async () => {
    const png = await makeImage('png');
    const mine = await startUpload(t, alice, { size: png.length });
    const other = await startUpload(t, bob, { size: png.length });
    const signature = new URL(mine.uploadUrl).searchParams.get('signature')!;
    const flipped = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    const expires = Number(new URL(mine.uploadUrl).searchParams.get('expires'));
    const before = await storedState(t);
    for (const url of [
      withParam(mine.uploadUrl, 'signature', flipped),
      withParam(mine.uploadUrl, 'expires', String(expires + 3600)),
      mine.uploadUrl.replace(/[?&]signature=[^&]*/, ''),
      // Alice's signature on Bob's file id.
      withParam(other.uploadUrl, 'signature', signature),
    ]) {
      const res = await putBytes(t, url, png);
      expect(res.statusCode, url).toBe(403);
      expect(problem(res).code).toBe('invalid_signature');
    }
    expect(await storedState(t)).toEqual(before);
  });

  it('forgets uploads that were never completed a day after they expired', async () => {
    const { fileId } = await startUpload(t, alice, { size: 10 });
    const exists = async () =>
      (await t.database.kysely.selectFrom('files').select('id').where('id', '=', fileId).executeTakeFirst()) !==
      undefined;
    t.clock.advance(60 * 60 * 1000);
    await pruneAbandonedUploads(t.database.kysely, t.clock);
    expect(await exists()).toBe(true);
    t.clock.advance(24 * 60 * 60 * 1000);
    await pruneAbandonedUploads(t.database.kysely, t.clock);
    expect(await exists()).toBe(false);
  });
});

describe('signed download URLs', () => {
  it('serves the bytes with headers that let nothing run or be sniffed', async () => {
    const png = await makeImage('png');
    const fileId = await uploadImage(t, alice, png);
    const { downloadUrl } = await createAsset(alice, fileId);
    expect(new URL(downloadUrl).pathname).toBe(`/files/${fileId}`);
    const res = await get(downloadUrl);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(png)).toBe(true);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(res.headers['content-disposition']).toBe(`inline; filename="image.png"; filename*=UTF-8''image.png`);
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+, immutable$/);
  });

  it('refuses a tampered signature, another file, another purpose and an expired URL', async () => {
    const aliceFile = await uploadImage(t, alice);
    const bobFile = await uploadImage(t, bob);
    const { downloadUrl } = await createAsset(alice, aliceFile);
    const signature = new URL(downloadUrl).searchParams.get('signature')!;
    const tampered = withParam(
      downloadUrl,
      'signature',
      `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
    );
    const bobsFile = downloadUrl.replace(aliceFile, bobFile);
    const asPreview = downloadUrl.replace(`/files/${aliceFile}`, `/files/${aliceFile}/preview`);
    for (const url of [tampered, bobsFile, asPreview]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(403);
      expect(problem(res).code).toBe('invalid_signature');
    }
    t.clock.advance(2 * 60 * 60 * 1000);
    const res = await get(downloadUrl);
    expect(res.statusCode).toBe(403);
    expect(problem(res).code).toBe('url_expired');
  });

  it('gives previewDownloadUrl once the preview is made: a WebP of at most 512 px', async () => {
    const big = await makeImage('jpeg', { width: 1200, height: 600 });
    const fileId = await uploadImage(t, alice, big, 'image/jpeg');
    const { assetId, previewDownloadUrl } = await createAsset(alice, fileId);
    expect(previewDownloadUrl).toBeNull();
    expect(t.notified).toContain('files');

    while ((await processPendingPreviews(t.database.kysely, runtime.store)) > 0);
    const asset = (await t.request(alice, { method: 'GET', url: `/v0/assets/${assetId}` })).json();
    expect(asset.previewDownloadUrl).toMatch(/\/files\/file_[0-9a-z]{26}\/preview\?expires=\d+&signature=/);
    const res = await get(asset.previewDownloadUrl);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta.format).toBe('webp');
    expect([meta.width, meta.height]).toEqual([512, 256]);
  });
});

describe('audience-pages file upload (operator CLI)', () => {
  const upload = fileCommands.find((c) => c.path.join(' ') === 'file upload')!;
  const run = (file: string, tenantId: string) =>
    upload.run(
      { database: t.database, db: t.database.kysely, config: t.app.ctx.config, clock: t.clock, migrations: {} },
      { values: { tenant: tenantId }, positionals: [file] },
    );

  it('uploads an image file for a tenant and returns its fileId, usable in an asset', async () => {
    const file = path.join(t.database.dataDir, 'cli-logo.webp');
    fs.writeFileSync(file, await makeImage('webp'));
    const result = await run(file, alice.tenantId);
    expect(result).toMatchObject({ contentType: 'image/webp', width: 64, height: 48 });
    await createAsset(alice, result.fileId as string);
  });

  it('applies the same checks: a PDF named .png is refused and nothing is left', async () => {
    const file = path.join(t.database.dataDir, 'renamed.png');
    fs.writeFileSync(file, PDF_BYTES);
    const before = await storedState(t);
    await expect(run(file, alice.tenantId)).rejects.toMatchObject({ code: 'invalid_image' });
    expect(await storedState(t)).toEqual(before);
  });

  it('refuses an unknown tenant', async () => {
    const file = path.join(t.database.dataDir, 'ok.png');
    fs.writeFileSync(file, await makeImage('png'));
    await expect(run(file, 'tenant_00000000000000000000000000')).rejects.toMatchObject({ code: 'not_found' });
  });
});
