import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';
import { fsyncDirectory } from '../../lib/fsync.js';

/** The file that holds the generated key when SECRET_KEY is not set (development). */
export const GENERATED_KEY_FILE = 'webhook-secret.key';

/** GCM's full tag; a shorter one would make forging a sealed value far cheaper. */
const TAG_BYTES = 16;
const IV_BYTES = 12;

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM. A sealed value reads
 * `v2.<key id>.<base64url(iv | tag | ciphertext)>`; the key id (8 hex characters of the key's
 * SHA-256) says which key sealed it, so several keys can be held during a rotation: the first
 * seals, every one opens, and `webhook reencrypt` moves old values onto the first key.
 *
 * The subscription id is the associated data: a sealed secret opens only for the subscription it
 * was made for, so someone who can write rows cannot make one subscription sign with another's
 * secret by copying the column. (`v1` values, sealed without it, are re-sealed by migration 0017
 * through {@link SecretBox.resealLegacy} and refused everywhere else.)
 */
export class SecretBox {
  readonly #keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.#keys = new Map(keys.map((k) => [keyId(k), k]));
    this.currentKeyId = keyId(keys[0]!);
  }

  seal(plain: string, subscriptionId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v2.${this.currentKeyId}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  open(sealed: string, subscriptionId: string): string {
    return this.#open(sealed, 'v2', subscriptionId);
  }

  /** Opens a `v1` value (sealed without associated data) and seals it again bound to its subscription. */
  resealLegacy(sealed: string, subscriptionId: string): string {
    return this.seal(this.#open(sealed, 'v1', null), subscriptionId);
  }

  #open(sealed: string, expected: 'v1' | 'v2', aad: string | null): string {
    const [version, kid, payload] = sealed.split('.');
    const key = kid === undefined ? undefined : this.#keys.get(kid);
    if (version !== expected || payload === undefined) throw new Error(`not a ${expected} sealed webhook secret`);
    if (key === undefined) {
      throw new Error(
        `webhook secret was sealed with key ${kid}, which this process does not hold (it holds ${[...this.#keys.keys()].join(', ')}); check SECRET_KEY`,
      );
    }
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed webhook secret is truncated');
    // authTagLength makes Node refuse any tag but a full one (setAuthTag alone accepts 4 bytes).
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /** Whether a sealed value was made with an older key (see `webhook reencrypt`). */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.currentKeyId;
  }
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

const boxes = new WeakMap<Config, SecretBox>();

/**
 * The box of this configuration: the SECRET_KEY keys, or else (development) a key generated once
 * into `DATA_DIR/webhook-secret.key` (see {@link generatedKey}). Loaded on first use, so processes
 * that never touch webhooks never create the file.
 */
export function secretBoxFor(config: Config): SecretBox {
  let box = boxes.get(config);
  if (box === undefined) {
    box = new SecretBox(config.secretKeys.length > 0 ? config.secretKeys : [generatedKey(config.dataDir)]);
    boxes.set(config, box);
  }
  return box;
}

/**
 * Reads the generated key, creating it when missing. The key is written to a temp file, fsynced,
 * then hard-linked to its name (link fails with EEXIST when the name exists, which makes it
 * create-exclusive: of two processes starting at once, one links, and both read that one's key),
 * and the directory is fsynced so the name survives a power loss. The file therefore never exists
 * empty or half written, whatever moment the process is killed at.
 *
 * @public Exported for webhooks.secret-box.test.ts, whose child processes import it by path (knip cannot see that).
 */
export function generatedKey(dataDir: string): Buffer {
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  if (!fs.existsSync(file)) {
    const temp = path.join(dataDir, `.${GENERATED_KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const fd = fs.openSync(temp, 'wx', 0o600);
      try {
        fs.writeSync(fd, `${randomBytes(32).toString('base64')}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      try {
        fs.linkSync(temp, file);
        fsyncDirectory(dataDir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}

/** What migration 0017 needs to re-seal `v1` secrets: the box, opened only if such rows exist. */
export function resealWithKeyOf(config: Config): (sealed: string, subscriptionId: string) => string {
  return (sealed, subscriptionId) => secretBoxFor(config).resealLegacy(sealed, subscriptionId);
}
