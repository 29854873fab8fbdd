import { describe, expect, it } from 'vitest';
import { startTestApp } from '../../test/harness.js';
import { deriveServiceSecret, loadServiceSecret } from './service-secrets.js';

const KEY = Buffer.alloc(32, 5).toString('base64');

describe('service secrets', () => {
  it('with SECRET_KEY: derived from it (HKDF), nothing stored in service_secrets, same key on every database', async () => {
    const one = await startTestApp({ config: { SECRET_KEY: KEY } });
    const two = await startTestApp({ config: { SECRET_KEY: KEY } });
    try {
      for (const t of [one, two]) {
        expect(await t.database.kysely.selectFrom('service_secrets').selectAll().execute()).toEqual([]);
      }
      // The key comes from SECRET_KEY alone: every database (every node) derives the same one, and
      // each purpose gets its own.
      const keys = [Buffer.from(KEY, 'base64')];
      const a = await loadServiceSecret(one.database.kysely, 'file-signing', one.clock, keys);
      expect(await loadServiceSecret(two.database.kysely, 'file-signing', two.clock, keys)).toBe(a);
      expect(a).toBe(deriveServiceSecret(keys[0]!, 'file-signing'));
      expect(await loadServiceSecret(one.database.kysely, 'cursor-signing', one.clock, keys)).not.toBe(a);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('without a key (development): random values kept in service_secrets, zero configuration', async () => {
    const t = await startTestApp();
    try {
      const names = (await t.database.kysely.selectFrom('service_secrets').select('name').execute()).map((r) => r.name);
      expect(names).toContain('cursor-signing');
      expect(names).toContain('file-signing');
    } finally {
      await t.close();
    }
  });
});
