import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/** The file that holds the generated key when WEBHOOK_SECRET_KEY is not set. */
export const GENERATED_KEY_FILE = 'webhook-secret.key';

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM. A sealed value reads
 * `v1.<key id>.<base64url(iv | tag | ciphertext)>`; the key id (8 hex characters of the key's
 * SHA-256) says which key sealed it, so several keys can be held during a rotation: the first
 * seals, every one opens, and `webhook reencrypt` moves old values onto the first key.
 */
export class SecretBox {
  readonly #keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.#keys = new Map(keys.map((k) => [keyId(k), k]));
    this.currentKeyId = keyId(keys[0]!);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.currentKeyId)!, iv);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${this.currentKeyId}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  open(sealed: string): string {
    const [version, kid, payload] = sealed.split('.');
    const key = kid === undefined ? undefined : this.#keys.get(kid);
    if (version !== 'v1' || payload === undefined) throw new Error('not a sealed webhook secret');
    if (key === undefined) {
      throw new Error(
        `webhook secret was sealed with key ${kid}, which this process does not hold (it holds ${[...this.#keys.keys()].join(', ')}); check WEBHOOK_SECRET_KEY`,
      );
    }
    const raw = Buffer.from(payload, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
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
 * The box of this configuration: the WEBHOOK_SECRET_KEY keys, or else a key generated once into
 * `DATA_DIR/webhook-secret.key` (mode 0600; created atomically, so concurrent first starts agree).
 * Loaded on first use, so processes that never touch webhooks never create the file.
 */
export function secretBoxFor(config: Config): SecretBox {
  let box = boxes.get(config);
  if (box === undefined) {
    box = new SecretBox(
      config.webhookSecretKeys.length > 0 ? config.webhookSecretKeys : [generatedKey(config.dataDir)],
    );
    boxes.set(config, box);
  }
  return box;
}

function generatedKey(dataDir: string): Buffer {
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}
