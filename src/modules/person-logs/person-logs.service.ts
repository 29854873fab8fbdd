import { supportsDataModifyingWith } from '../../db/dialect.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { withIdempotency, type StoredResponse } from '../../idempotency/idempotency.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { recordActivityOfPerson } from '../account-activity/index.js';
import { findPerson, normalizeIdentity, personToCreate, resolvePerson } from '../persons/index.js';
import * as q from './person-logs.queries.js';
import {
  PERSON_LOG_LIMITS,
  type PersonLogBody,
  type PersonLogCreated,
  type PersonLogEntry,
} from './person-logs.schemas.js';

const PERSON_LOG_OPERATION = 'person_logs.create';

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

  // Where writes combine (PostgreSQL), an entry about someone nobody holds yet writes the person,
  // the entry and the account's activity in one statement (a round trip each would otherwise be
  // the cost of the write). Without an idempotency key it needs no transaction of its own either.
  // When the statement writes nothing, someone holds an identity or the slug: the usual path takes over.
  const fresh =
    supportsDataModifyingWith(scope.engine) && body.idempotencyKey === undefined
      ? personToCreate(clock, body, identity)
      : undefined;
  if (fresh !== undefined) {
    const id = newId('personLog');
    if (await q.insertWithNewPerson(scope, { ...fresh, entry_id: id, source: body.source, type: body.type, payload })) {
      return { ...createdResult(body, fresh.id, id, fresh.created_at, true), replayed: false };
    }
  }

  try {
    return await writeResolved(scope, clock, body, identity, fresh !== undefined, payload);
  } catch (error) {
    // The person was erased between the read above and the insert (PostgreSQL reads committed rows
    // without locking them): the same answer as for a person id that was never there.
    if (!isForeignKeyViolation(error) || body.personId === undefined) throw error;
    throw validationFailed('/body/personId', 'must be the id of an existing person of this tenant');
  }
}

function writeResolved(
  scope: TenantScope,
  clock: Clock,
  body: PersonLogBody,
  identity: ReturnType<typeof normalizeIdentity>,
  insertTried: boolean,
  payload: string,
) {
  return withIdempotency(
    scope,
    clock,
    { operation: PERSON_LOG_OPERATION, key: body.idempotencyKey, body },
    async (tx) => {
      const { person, created } = await resolvePerson(tx, clock, body, identity, { insertTried });
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
      // The link as it is now, not as resolvePerson read it (see recordActivityOfPerson).
      await recordActivityOfPerson(tx, person.id, now);
      return createdResult(body, person.id, id, now, created);
    },
  );
}

/** The 201 of a written entry (stored as the idempotent result when a key was given). */
function createdResult(
  body: PersonLogBody,
  personId: string,
  personLogId: string,
  createdAt: string,
  createdPerson: boolean,
) {
  return {
    status: 201,
    body: { personId, personLogId, createdAt, createdPerson, source: body.source, type: body.type },
  };
}

/**
 * A person's activity timeline (docs/api.md, Person log entries: reading them back): newest first,
 * optionally of one `source` and/or `type`, with the exact count of what the filters match. An
 * unknown person, or another tenant's, is a 404.
 */
export async function listPersonLogs(
  scope: TenantScope,
  filter: q.PersonLogFilter,
  window: KeysetWindow,
): Promise<{ items: PersonLogEntry[]; totalCount: number }> {
  if ((await findPerson(scope, filter.personId)) === undefined) throw notFound('person', filter.personId);
  const [rows, totalCount] = await Promise.all([
    q.listPersonLogs(scope, filter, window),
    q.countPersonLogs(scope, filter),
  ]);
  return {
    items: rows.map((row) => ({
      personLogId: row.id,
      personId: row.person_id,
      source: row.source,
      type: row.type,
      payload: row.payload,
      createdAt: row.created_at,
    })),
    totalCount,
  };
}
