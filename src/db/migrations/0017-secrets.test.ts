import { createCipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../../test/harness.js';
import { subscribe, testSecretBox, TEST_SECRET_KEY } from '../../../test/factories/webhooks.js';
import { migrations } from './index.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

/** A secret as the service sealed it before migration 0017: `v1`, no associated data. */
function sealV1(plain: string): string {
  const key = Buffer.from(TEST_SECRET_KEY, 'base64');
  const iv = Buffer.alloc(12, 3);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1.${testSecretBox.currentKeyId}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/**
 * Runs migration 0017 again, as if the database had been made by the release before it (its `up`
 * directly: the migrator would refuse to run it again under the migrations that came after it).
 */
async function rerun0017(resealWebhookSecret?: (sealed: string, id: string) => string) {
  await migrations['0017-secrets']!.up(t.database.kysely, t.database.engine, { resealWebhookSecret });
}

describe('migration 0017: webhook secrets bound to their subscription', () => {
  it('re-seals v1 secrets (current and previous) as v2 with the subscription id as associated data', async () => {
    const a = await subscribe(alice.scope, t.clock, 'https://a.example.com/hook');
    const b = await subscribe(alice.scope, t.clock, 'https://b.example.com/hook');
    const db = t.database.kysely;
    await db
      .updateTable('webhook_subscriptions')
      .set({ secret: sealV1('whsec_a'), previous_secret: sealV1('whsec_a_old') })
      .where('id', '=', a.subscriptionId)
      .execute();
    const bBefore = await db
      .selectFrom('webhook_subscriptions')
      .select('secret')
      .where('id', '=', b.subscriptionId)
      .executeTakeFirstOrThrow();

    // Without the key the migration refuses (rather than leaving secrets nobody can open).
    await expect(rerun0017()).rejects.toThrow(/re-sealed with the secret key/);

    await rerun0017((sealed, id) => testSecretBox.resealLegacy(sealed, id));
    const rows = await db.selectFrom('webhook_subscriptions').select(['id', 'secret', 'previous_secret']).execute();
    const rowA = rows.find((r) => r.id === a.subscriptionId)!;
    expect(rowA.secret).toMatch(/^v2\./);
    expect(testSecretBox.open(rowA.secret, a.subscriptionId)).toBe('whsec_a');
    expect(testSecretBox.open(rowA.previous_secret!, a.subscriptionId)).toBe('whsec_a_old');
    // Bound: it does not open as another subscription's secret.
    expect(() => testSecretBox.open(rowA.secret, b.subscriptionId)).toThrow();
    // Values already in v2 are left as they were.
    expect(rows.find((r) => r.id === b.subscriptionId)!.secret).toBe(bBefore.secret);
  });
});
