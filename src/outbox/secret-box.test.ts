import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../config.js';
import { GENERATED_KEY_FILE, SecretBox, secretBoxFor } from './secret-box.js';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('SecretBox', () => {
  it('seals with AES-256-GCM: random IV, nothing in clear, opens back', () => {
    const box = new SecretBox([keyA]);
    const a = box.seal('whsec_secret');
    const b = box.seal('whsec_secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(box.open(a)).toBe('whsec_secret');
  });

  it('refuses a tampered value and names a missing key', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('whsec_secret');
    const last = sealed.at(-2) === 'A' ? 'B' : 'A';
    expect(() => box.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`)).toThrow();
    expect(() => new SecretBox([keyB]).open(sealed)).toThrow(/sealed with key [0-9a-f]{8}/);
  });

  it('rotates: the first key seals, every key opens, old values are stale', () => {
    const old = new SecretBox([keyA]).seal('whsec_old');
    const rotated = new SecretBox([keyB, keyA]);
    expect(rotated.open(old)).toBe('whsec_old');
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.seal('whsec_new'))).toBe(false);
  });

  it('generates a key into DATA_DIR once (mode 0600) when WEBHOOK_SECRET_KEY is unset', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-key-'));
    try {
      const first = secretBoxFor(parseConfig({ DATA_DIR: dir }));
      const file = path.join(dir, GENERATED_KEY_FILE);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const sealed = first.seal('whsec_x');
      // Another process (another config) reads the same file.
      expect(secretBoxFor(parseConfig({ DATA_DIR: dir })).open(sealed)).toBe('whsec_x');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses WEBHOOK_SECRET_KEY and rejects keys that are not 32 bytes of base64', () => {
    const config = parseConfig({ WEBHOOK_SECRET_KEY: `${keyB.toString('base64')}, ${keyA.toString('base64')}` });
    expect(config.webhookSecretKeys).toHaveLength(2);
    expect(() => parseConfig({ WEBHOOK_SECRET_KEY: 'c2hvcnQ=' })).toThrow(ConfigError);
  });
});
