import { spawn } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, parseConfig } from '../../config.js';
import { GENERATED_KEY_FILE, SecretBox, secretBoxFor } from './webhooks.secret-box.js';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);
const SUB = 'webhook_subscription_01';

/** A value in the old `v1` format: sealed without associated data. */
function sealV1(key: Buffer, plain: string): string {
  const iv = Buffer.alloc(12, 9);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const kid = new SecretBox([key]).currentKeyId;
  return `v1.${kid}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

describe('SecretBox', () => {
  it('seals with AES-256-GCM: random IV, nothing in clear, opens back', () => {
    const box = new SecretBox([keyA]);
    const a = box.seal('whsec_secret', SUB);
    const b = box.seal('whsec_secret', SUB);
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(a).toMatch(/^v2\.[0-9a-f]{8}\./);
    expect(box.open(a, SUB)).toBe('whsec_secret');
  });

  it('refuses a tampered value and names a missing key', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('whsec_secret', SUB);
    const last = sealed.at(-2) === 'A' ? 'B' : 'A';
    expect(() => box.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`, SUB)).toThrow();
    expect(() => new SecretBox([keyB]).open(sealed, SUB)).toThrow(/sealed with key [0-9a-f]{8}/);
  });

  it('opens a secret only for the subscription it was sealed for', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('whsec_secret', SUB);
    expect(() => box.open(sealed, 'webhook_subscription_02')).toThrow();
  });

  it('refuses a shortened authentication tag (only a full 16-byte tag is accepted)', () => {
    const box = new SecretBox([keyA]);
    // An empty secret with its tag cut to 4 bytes: a forger would need only 2^32 tries to find one.
    const [v, kid, payload] = box.seal('', SUB).split('.');
    const short = Buffer.from(payload!, 'base64url').subarray(0, 12 + 4);
    expect(() => box.open(`${v}.${kid}.${short.toString('base64url')}`, SUB)).toThrow();
  });

  it('refuses v1 values (no associated data) except to re-seal them, bound to the subscription', () => {
    const box = new SecretBox([keyA]);
    const old = sealV1(keyA, 'whsec_old');
    expect(() => box.open(old, SUB)).toThrow(/not a v2/);
    const resealed = box.resealLegacy(old, SUB);
    expect(resealed).toMatch(/^v2\./);
    expect(box.open(resealed, SUB)).toBe('whsec_old');
    expect(() => box.open(resealed, 'webhook_subscription_02')).toThrow();
  });

  it('rotates: the first key seals, every key opens, old values are stale', () => {
    const old = new SecretBox([keyA]).seal('whsec_old', SUB);
    const rotated = new SecretBox([keyB, keyA]);
    expect(rotated.open(old, SUB)).toBe('whsec_old');
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.seal('whsec_new', SUB))).toBe(false);
  });
});

describe('the generated key file (development, no SECRET_KEY)', () => {
  let dir: string;
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is generated into DATA_DIR once (mode 0600) and read back by the next process', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-key-'));
    const first = secretBoxFor(parseConfig({ DATA_DIR: dir }));
    const file = path.join(dir, GENERATED_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const sealed = first.seal('whsec_x', SUB);
    // Another process (another config) reads the same file.
    expect(secretBoxFor(parseConfig({ DATA_DIR: dir })).open(sealed, SUB)).toBe('whsec_x');
    // Nothing but the key is left behind (no temp files).
    expect(fs.readdirSync(dir)).toEqual([GENERATED_KEY_FILE]);
  });

  it('is never left empty or half written by a crash while it is written', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-key-'));
    // The process dies (here: the write throws) after the file was created, before its bytes landed.
    const write = vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw new Error('killed mid-write');
    });
    try {
      expect(() => secretBoxFor(parseConfig({ DATA_DIR: dir }))).toThrow('killed mid-write');
    } finally {
      write.mockRestore();
    }
    expect(fs.existsSync(path.join(dir, GENERATED_KEY_FILE))).toBe(false);
    // The next start generates the key as if nothing had happened.
    const box = secretBoxFor(parseConfig({ DATA_DIR: dir }));
    expect(box.open(box.seal('whsec_x', SUB), SUB)).toBe('whsec_x');
  });

  it('comes out the same in processes started at the same moment, and never empty', async () => {
    for (let round = 0; round < 2; round++) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-key-'));
      const start = Date.now() + 1_500;
      // Each child waits for the same instant, then loads the key and prints it.
      const script = `
        const { generatedKey } = await import(${JSON.stringify(path.resolve('src/modules/webhooks/webhooks.secret-box.ts'))});
        while (Date.now() < ${start}) {}
        process.stdout.write(generatedKey(${JSON.stringify(dir)}).toString('base64'));`;
      const children = [0, 1, 2, 3].map(() =>
        spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      );
      const keys = await Promise.all(
        children.map(async (child) => {
          let out = '';
          child.stdout.on('data', (d) => (out += d));
          const [code] = await once(child, 'exit');
          expect(code).toBe(0);
          return out;
        }),
      );
      expect(keys[0]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(new Set(keys).size).toBe(1);
      expect(fs.readFileSync(path.join(dir, GENERATED_KEY_FILE), 'utf8').trim()).toBe(keys[0]);
      expect(fs.readdirSync(dir)).toEqual([GENERATED_KEY_FILE]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('SECRET_KEY', () => {
  it('is read (and WEBHOOK_SECRET_KEY as its older name); keys must be 32 bytes of base64', () => {
    const list = `${keyB.toString('base64')}, ${keyA.toString('base64')}`;
    expect(parseConfig({ SECRET_KEY: list }).secretKeys).toEqual([keyB, keyA]);
    expect(parseConfig({ WEBHOOK_SECRET_KEY: list }).secretKeys).toEqual([keyB, keyA]);
    expect(() => parseConfig({ SECRET_KEY: 'c2hvcnQ=' })).toThrow(ConfigError);
    expect(() =>
      parseConfig({ SECRET_KEY: keyA.toString('base64'), WEBHOOK_SECRET_KEY: keyB.toString('base64') }),
    ).toThrow(/both set/);
  });

  it('is required, with PUBLIC_BASE_URL, when NODE_ENV=production', () => {
    expect(() => parseConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pages.example.com' })).toThrow(
      /NODE_ENV=production needs SECRET_KEY/,
    );
    expect(() => parseConfig({ NODE_ENV: 'production', SECRET_KEY: keyA.toString('base64') })).toThrow(
      /NODE_ENV=production needs PUBLIC_BASE_URL/,
    );
    const config = parseConfig({
      NODE_ENV: 'production',
      SECRET_KEY: keyA.toString('base64'),
      PUBLIC_BASE_URL: 'https://pages.example.com',
    });
    expect(config.secretKeys).toHaveLength(1);
    // Development keeps working with no configuration at all.
    expect(parseConfig({}).secretKeys).toEqual([]);
  });
});
