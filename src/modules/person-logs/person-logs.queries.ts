import { sql, type Insertable, type SqlBool } from 'kysely';
import { supportsDataModifyingWith } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import { preparedQuery } from '../../db/prepared.js';
import type { PersonLogsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { activityForward } from '../account-activity/index.js';
import { insertUnlessTaken, type PersonRow } from '../persons/index.js';

export type NewPersonLogRow = Omit<Insertable<PersonLogsTable>, 'tenant_id'>;

// Every person-log write runs this: prepared once (ADR 0002).
const insertOne = preparedQuery((scope, p: Required<NewPersonLogRow>) =>
  scope.insertInto('person_logs', {
    id: p.id,
    person_id: p.person_id,
    source: p.source,
    type: p.type,
    payload: p.payload,
    created_at: p.created_at,
  }),
);

export async function insertPersonLog(scope: TenantScope, row: Required<NewPersonLogRow>) {
  await insertOne(scope, row);
}

export async function insertPersonLogs(scope: TenantScope, rows: NewPersonLogRow[]) {
  await scope.insertInto('person_logs', rows).execute();
}

/** A new person and its first entry, written together (the entry is stamped with the person's `created_at`). */
export type NewPersonWithEntry = PersonRow & { entry_id: string; source: string; type: string; payload: string };

// A data-modifying WITH (db/dialect.ts, supportsDataModifyingWith). Three statements of the write
// path in one: the insert-first of resolvePerson, the entry, and the account's activity, which run
// only when the person was inserted. Each statement is a round trip, and the round trips were the
// cost of a write (docs/performance.md).
const newPersonWithEntry = preparedQuery((scope, p: NewPersonWithEntry) =>
  scope
    .unscopedDb()
    .with('new_person', () => insertUnlessTaken(scope, p).returning('persons.id'))
    .with('activity', () =>
      // A person without an account has a null domain, which matches no account.
      activityForward(scope, p.account_domain as string, p.created_at).where(
        sql<SqlBool>`exists (select 1 from new_person)`,
      ),
    )
    .insertInto('person_logs')
    .columns(['tenant_id', 'id', 'person_id', 'source', 'type', 'payload', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('new_person')
        .select([
          eb.val(scope.tenantId).as('tenant_id'),
          eb.val(p.entry_id).as('id'),
          'new_person.id as person_id',
          eb.val(p.source).as('source'),
          eb.val(p.type).as('type'),
          eb.cast(eb.val(p.payload), 'jsonb').as('payload'),
          eb.cast(eb.val(p.created_at), 'timestamptz').as('created_at'),
        ]),
    )
    .returning('person_logs.id'),
);

/**
 * Inserts the person with its entry, and moves its account's activity forward, unless the person
 * would break a unique identity or the slug: then nothing is written. Returns whether it wrote.
 */
export async function insertWithNewPerson(scope: TenantScope, row: NewPersonWithEntry): Promise<boolean> {
  if (!supportsDataModifyingWith(scope.engine)) throw new Error('insertWithNewPerson needs a data-modifying WITH');
  return (await newPersonWithEntry(scope, row)).length > 0;
}

/** A person's most recent entries, newest first (the index on tenant, person, created_at serves it). */
export async function recentPersonLogs(scope: TenantScope, personId: string, limit: number) {
  return scope
    .selectFrom('person_logs')
    .select(['person_logs.source', 'person_logs.type', 'person_logs.payload', 'person_logs.created_at'])
    .where('person_logs.person_id', '=', personId)
    .orderBy('person_logs.created_at', 'desc')
    .orderBy('person_logs.id', 'desc')
    .limit(limit)
    .execute();
}

/** Which entries of a person a list shows (`null`: any). */
export interface PersonLogFilter {
  personId: string;
  source: string | null;
  type: string | null;
}

const NEWEST_FIRST = [
  { ref: 'person_logs.created_at', direction: 'desc' as const },
  { ref: 'person_logs.id', direction: 'desc' as const },
];

function filtered(scope: TenantScope, filter: PersonLogFilter) {
  let query = scope.selectFrom('person_logs').where('person_logs.person_id', '=', filter.personId);
  if (filter.source !== null) query = query.where('person_logs.source', '=', filter.source);
  if (filter.type !== null) query = query.where('person_logs.type', '=', filter.type);
  return query;
}

/** A page of a person's entries, newest first (the index on tenant, person, created_at serves it). */
export async function listPersonLogs(scope: TenantScope, filter: PersonLogFilter, window: KeysetWindow) {
  let query = filtered(scope, filter).select([
    'person_logs.id',
    'person_logs.person_id',
    'person_logs.source',
    'person_logs.type',
    'person_logs.payload',
    'person_logs.created_at',
  ]);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('person_logs.created_at', 'desc')
    .orderBy('person_logs.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countPersonLogs(scope: TenantScope, filter: PersonLogFilter): Promise<number> {
  const row = await filtered(scope, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
