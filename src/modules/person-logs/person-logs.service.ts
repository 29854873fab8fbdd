import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { validationFailed } from '../../http/errors.js';
import { withIdempotency, type StoredResponse } from '../../idempotency/idempotency.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { recordAccountActivity } from '../account-activity/index.js';
import { normalizeIdentity, resolvePerson } from '../persons/index.js';
import * as q from './person-logs.queries.js';
import { PERSON_LOG_LIMITS, type PersonLogBody, type PersonLogCreated } from './person-logs.schemas.js';

export const PERSON_LOG_OPERATION = 'person_logs.create';

/**
 * Writes a log entry against the person the body identifies, creating the person when nobody
 * matches (docs/api.md, endpoint 11). With an `idempotencyKey` it runs at most once: a repeat
 * returns the stored result. The entry moves the linked account's `latestActivityAt` forward.
 */
export async function writePersonLog(
  scope: TenantScope,
  clock: Clock,
  body: PersonLogBody,
): Promise<StoredResponse<PersonLogCreated>> {
  const payload = json(body.payload);
  if (Buffer.byteLength(payload) > PERSON_LOG_LIMITS.payloadBytes) {
    throw validationFailed('/body/payload', `must be at most ${PERSON_LOG_LIMITS.payloadBytes} bytes as JSON`);
  }
  const identity = normalizeIdentity(body);

  return withIdempotency(
    scope,
    clock,
    { operation: PERSON_LOG_OPERATION, key: body.idempotencyKey, body },
    async (tx) => {
      const { person, created } = await resolvePerson(tx, clock, body, identity);
      const now = isoNow(clock);
      const id = newId('personLog');
      await q.insertPersonLog(tx, {
        id,
        person_id: person.id,
        source: body.source,
        type: body.type,
        payload,
        created_at: now,
      });
      if (person.account_domain !== null) await recordAccountActivity(tx, person.account_domain, now);
      return {
        status: 201,
        body: {
          personId: person.id,
          personLogId: id,
          createdAt: now,
          createdPerson: created,
          source: body.source,
          type: body.type,
        },
      };
    },
  );
}
