import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { json } from '../db/json.js';
import type { DB } from '../db/schema.js';
import type { TenantScope } from '../db/tenant-scope.js';
import { AppError } from '../http/errors.js';
import type { Clock } from '../lib/clock.js';

/** How long a key is remembered (docs/api.md, Idempotency): 48 hours, twice Stripe's minimum of 24. */
export const IDEMPOTENCY_TTL_MS = 48 * 60 * 60 * 1000;

export interface StoredResponse<T> {
  status: number;
  body: T;
  /** True when this is the stored result of an earlier request with the same key. */
  replayed: boolean;
}

/**
 * Answers with the stored (or fresh) result; a replay carries `Idempotent-Replayed: true`, so a
 * client can tell it got the first request's outcome.
 */
export function sendIdempotent(reply: FastifyReply, result: StoredResponse<unknown>): FastifyReply {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).send(result.body);
}

/** A stable hash of a request body: the same JSON with keys in any order hashes the same. */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * JSON with object keys sorted. Written with an explicit stack rather than recursion, so that no
 * body, however deeply nested, can overflow the call stack here (the body guard refuses bodies
 * nested deeper than 64 levels before this runs; this does not rely on it).
 */
function canonicalJson(root: unknown): string {
  const out: string[] = [];
  // A string is text to write as is; anything else is a value still to be written.
  const stack: ({ text: string } | { value: unknown })[] = [{ value: root }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const { value } = item;
    if (Array.isArray(value)) {
      stack.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i] });
        if (i > 0) stack.push({ text: ',' });
      }
      stack.push({ text: '[' });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push({ text: '}' });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push({ value: v });
        stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
      }
      stack.push({ text: '{' });
    } else {
      out.push(JSON.stringify(value));
    }
  }
  return out.join('');
}

/**
 * Runs `operation` at most once per (tenant, operation name, key), with Stripe's semantics:
 * - the first request runs the operation and its result is stored in the same transaction, so
 *   the key exists if and only if the operation's writes committed (a failed request leaves no
 *   key behind and may be retried);
 * - a repeat with the same body returns the stored result and writes nothing;
 * - a repeat with a different body is refused: 422 idempotency_key_reused;
 * - concurrent repeats wait on the first one's lock (the key's primary key; on SQLite the write
 *   lock) and then get its result, so exactly one operation runs.
 * Without a key, `operation` simply runs in a transaction.
 */
export async function withIdempotency<T>(
  scope: TenantScope,
  clock: Clock,
  request: { operation: string; key: string | undefined; body: unknown },
  operation: (tx: TenantScope) => Promise<{ status: number; body: T }>,
): Promise<StoredResponse<T>> {
  if (request.key === undefined) {
    const result = await scope.transaction(operation);
    return { ...result, replayed: false };
  }
  const key = request.key;
  const fingerprint = requestFingerprint(request.body);
  return scope.transaction(async (tx) => {
    const now = clock.now();
    const claim = await claimKey(tx, request.operation, key, fingerprint, now);
    if (claim.kind === 'stored') {
      if (claim.requestHash !== fingerprint) {
        throw new AppError(
          'idempotency_key_reused',
          'This idempotencyKey was already used with a different request body. Use a new key for a new request.',
          [{ path: '/body/idempotencyKey', message: 'was used before with a different body' }],
        );
      }
      return { status: claim.status, body: claim.body as T, replayed: true };
    }

    const result = await operation(tx);
    await tx
      .updateTable('idempotency_keys')
      .set({ response_status: result.status, response_body: json(result.body) })
      .where('operation', '=', request.operation)
      .where('key', '=', key)
      .execute();
    return { ...result, replayed: false };
  });
}

/** How often a request looks again at a key that another request took over or pruned meanwhile. */
const CLAIM_ROUNDS = 3;

type Claim = { kind: 'ours' } | { kind: 'stored'; requestHash: string; status: number; body: unknown };

/**
 * Makes the key ours inside `tx`, or returns what another request stored under it. A new key is
 * inserted (a concurrent insert of the same key waits on the first one's lock, then sees it). An
 * expired key that the maintenance worker has not pruned yet is taken over, but only by the
 * request whose update still finds the expiry it read: on PostgreSQL two requests can read the
 * same expired row, and the second one's update waits for the first one's commit, then matches
 * nothing (the expiry moved), so it reads the key again and replays the first one's result
 * instead of running the operation a second time.
 */
async function claimKey(
  tx: TenantScope,
  operation: string,
  key: string,
  fingerprint: string,
  now: Date,
): Promise<Claim> {
  const nowIso = now.toISOString();
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString();
  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    const inserted = await tx
      .insertInto('idempotency_keys', {
        operation,
        key,
        request_hash: fingerprint,
        response_status: 0,
        response_body: json(null),
        created_at: nowIso,
        expires_at: expiresAt,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'operation', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: 'ours' };

    const existing = await tx
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'response_status', 'response_body', 'expires_at'])
      .where('operation', '=', operation)
      .where('key', '=', key)
      .executeTakeFirst();
    if (existing === undefined) continue; // pruned since the insert: insert again
    if (existing.expires_at > nowIso) {
      return {
        kind: 'stored',
        requestHash: existing.request_hash,
        status: existing.response_status,
        body: existing.response_body,
      };
    }
    // An expired key is forgotten: this request takes it over, if nobody did since we read it.
    const takenOver = await tx
      .updateTable('idempotency_keys')
      .set({ request_hash: fingerprint, created_at: nowIso, expires_at: expiresAt })
      .where('operation', '=', operation)
      .where('key', '=', key)
      .where('expires_at', '=', existing.expires_at)
      .executeTakeFirst();
    if (Number(takenOver.numUpdatedRows) === 1) return { kind: 'ours' };
  }
  throw new AppError(
    'idempotency_request_in_progress',
    'Another request with this idempotencyKey is being processed. Retry after a moment.',
  );
}

/** Deletes keys past their retention; run periodically by the maintenance worker. */
export async function pruneIdempotencyKeys(db: Kysely<DB>, clock: Clock): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<', clock.now().toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
