import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TenantScope } from '../db/tenant-scope.js';
import { AppError } from '../http/errors.js';
import { appendEvent } from '../outbox/events.js';
import { useTestApp } from '../../test/harness.js';
import { IDEMPOTENCY_TTL_MS, pruneIdempotencyKeys, requestFingerprint, withIdempotency } from './idempotency.js';

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

/** An operation that writes one outbox row, so that we can count what ran. */
const writeOne = (marker: string) => async (tx: TenantScope) => {
  const event = await appendEvent(tx, t.clock, 'form.submitted', { marker });
  return { status: 201, body: { eventId: event.id } };
};

async function countMarker(marker: string) {
  const rows = await tenant.scope.selectFrom('events').select('data').execute();
  return rows.filter((r) => (r.data as { marker?: string }).marker === marker).length;
}

describe('withIdempotency', () => {
  it('runs once and replays the stored result for the same key and body', async () => {
    const request = { operation: 'test.op', key: 'k-same', body: { a: 1, b: [1, 2] } };
    const first = await withIdempotency(tenant.scope, t.clock, request, writeOne('same'));
    const again = await withIdempotency(
      tenant.scope,
      t.clock,
      { ...request, body: { b: [1, 2], a: 1 } },
      writeOne('same'),
    );
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });
    expect(await countMarker('same')).toBe(1);
  });

  it('refuses the same key with a different body and writes nothing', async () => {
    await withIdempotency(
      tenant.scope,
      t.clock,
      { operation: 'test.op', key: 'k-diff', body: { a: 1 } },
      writeOne('diff'),
    );
    const attempt = withIdempotency(
      tenant.scope,
      t.clock,
      { operation: 'test.op', key: 'k-diff', body: { a: 2 } },
      writeOne('diff'),
    );
    await expect(attempt).rejects.toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(await countMarker('diff')).toBe(1);
  });

  it('keeps keys apart per tenant and per operation', async () => {
    const other = await t.createTenant();
    const body = { a: 1 };
    await withIdempotency(tenant.scope, t.clock, { operation: 'test.op', key: 'k-scope', body }, writeOne('scope'));
    const otherTenant = await withIdempotency(
      other.scope,
      t.clock,
      { operation: 'test.op', key: 'k-scope', body },
      writeOne('scope'),
    );
    const otherOp = await withIdempotency(
      tenant.scope,
      t.clock,
      { operation: 'test.other', key: 'k-scope', body },
      writeOne('scope'),
    );
    expect(otherTenant.replayed).toBe(false);
    expect(otherOp.replayed).toBe(false);
  });

  it('leaves no key behind when the operation fails, so a retry can succeed', async () => {
    const request = { operation: 'test.op', key: 'k-fail', body: {} };
    const failing = async (tx: TenantScope) => {
      await writeOne('fail')(tx);
      throw new AppError('validation_failed', 'nope');
    };
    await expect(withIdempotency(tenant.scope, t.clock, request, failing)).rejects.toBeInstanceOf(AppError);
    expect(await countMarker('fail')).toBe(0);
    const retry = await withIdempotency(tenant.scope, t.clock, request, writeOne('fail'));
    expect(retry.replayed).toBe(false);
    expect(await countMarker('fail')).toBe(1);
  });

  it('runs exactly once under concurrent repeats, and every caller gets that result', async () => {
    const request = { operation: 'test.op', key: 'k-race', body: { x: 'y' } };
    const results = await Promise.all(
      Array.from({ length: 12 }, () => withIdempotency(tenant.scope, t.clock, request, writeOne('race'))),
    );
    expect(await countMarker('race')).toBe(1);
    expect(new Set(results.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it('forgets keys after the retention period', async () => {
    const request = { operation: 'test.op', key: 'k-old', body: { v: 1 } };
    await withIdempotency(tenant.scope, t.clock, request, writeOne('old'));
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    // Expired: the key is taken over, even with another body.
    const reused = await withIdempotency(tenant.scope, t.clock, { ...request, body: { v: 2 } }, writeOne('old'));
    expect(reused.replayed).toBe(false);
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    expect(await pruneIdempotencyKeys(t.database.kysely, t.clock)).toBeGreaterThanOrEqual(1);
  });

  it('lets exactly one of many concurrent requests take over an expired, unpruned key', async () => {
    const request = { operation: 'test.op', key: 'k-expired-race', body: { v: 1 } };
    await withIdempotency(tenant.scope, t.clock, request, writeOne('takeover'));
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    // The operation lingers a moment, so that every request reads the expired key before the
    // first takeover commits (on PostgreSQL each runs on its own connection).
    const slow = async (tx: TenantScope) => {
      const result = await writeOne('takeover')(tx);
      await new Promise((resolve) => setTimeout(resolve, 25));
      return result;
    };
    const results = await Promise.all(
      Array.from({ length: 12 }, () => withIdempotency(tenant.scope, t.clock, request, slow)),
    );
    expect(await countMarker('takeover')).toBe(2); // the first request, and one takeover
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => JSON.stringify(r.body))).size).toBe(1);
  });

  it('fingerprints bodies independently of key order', () => {
    expect(requestFingerprint({ a: 1, b: { c: 2, d: 3 } })).toBe(requestFingerprint({ b: { d: 3, c: 2 }, a: 1 }));
    expect(requestFingerprint({ a: 1 })).not.toBe(requestFingerprint({ a: '1' }));
  });

  it('fingerprints any nesting depth without recursion, as canonical JSON', () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(requestFingerprint({ b: [1, 'x', null, { d: true, c: [] }], a: {} })).toBe(
      sha256('{"a":{},"b":[1,"x",null,{"c":[],"d":true}]}'),
    );
    // 200,000 levels overflow any recursive walk (the body guard stops such bodies earlier).
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;
    expect(requestFingerprint(deep)).toBe(sha256(`${'['.repeat(200_000)}${']'.repeat(200_000)}`));
  });
});
