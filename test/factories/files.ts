import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { fileRuntime, uploadFile } from '../../src/modules/files/index.js';
import type { Tenant, TestApp } from '../harness.js';

/** A small real image of the given format (deterministic noise, so it compresses like a photo). */
export async function makeImage(
  format: 'png' | 'jpeg' | 'gif' | 'webp' | 'avif' = 'png',
  size: { width: number; height: number } = { width: 64, height: 48 },
): Promise<Buffer> {
  const { width, height } = size;
  const pixels = Buffer.from(Array.from({ length: width * height * 3 }, (_, i) => (i * 7919) % 251));
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .toFormat(format)
    .toBuffer();
}

/** The first bytes of a PDF document, whatever the name it is uploaded under. */
export const PDF_BYTES = Buffer.from(
  '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
);

export const SVG_BYTES = Buffer.from(
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
);

/** Path and query of a URL the service made (inject takes no origin). */
export function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

export async function startUpload(
  t: TestApp,
  tenant: Tenant,
  body: { filename?: string; contentType?: string; size: number },
) {
  const res = await t.request(tenant, {
    method: 'POST',
    url: '/v0/files',
    payload: { filename: 'image.png', contentType: 'image/png', ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { fileId: string; uploadUrl: string; expiresAt: string };
}

export function putBytes(
  t: TestApp,
  uploadUrl: string,
  bytes: Buffer,
  contentType = 'image/png',
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'PUT',
    url: pathOf(uploadUrl),
    headers: { 'content-type': contentType },
    payload: bytes,
  });
}

/** A completed image file, made through the service (as the CLI uploads one); returns its fileId. */
export async function makeImageFile(t: TestApp, tenant: Tenant, bytes?: Buffer): Promise<string> {
  const { store } = await fileRuntime(t.app.ctx);
  const uploaded = await uploadFile(tenant.scope, store, t.clock, {
    filename: 'image.png',
    bytes: bytes ?? (await makeImage('png')),
  });
  return uploaded.fileId;
}

/** The HTTP upload flow, POST /v0/files then PUT to the signed URL: returns the completed fileId. */
export async function uploadImage(
  t: TestApp,
  tenant: Tenant,
  bytes?: Buffer,
  contentType = 'image/png',
): Promise<string> {
  const data = bytes ?? (await makeImage('png'));
  const { fileId, uploadUrl } = await startUpload(t, tenant, { size: data.length, contentType });
  const res = await putBytes(t, uploadUrl, data, contentType);
  expect(res.statusCode, res.body).toBe(200);
  return fileId;
}

function filesOnDisk(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name)).length;
}

/** Everything an upload can leave behind: completed file rows, stored blobs, files on disk. */
export async function storedState(t: TestApp) {
  const db = t.database.kysely;
  const completed = await db
    .selectFrom('files')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'completed')
    .executeTakeFirstOrThrow();
  const blobs = await db
    .selectFrom('file_blobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const assets = await db
    .selectFrom('assets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return {
    completedFiles: Number(completed.n),
    blobs: Number(blobs.n),
    diskFiles: filesOnDisk(path.join(t.database.dataDir, 'files')),
    assets: Number(assets.n),
  };
}
