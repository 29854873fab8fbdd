import type { Insertable, Updateable } from 'kysely';
import { forUpdate, substringMatch } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import { preparedQuery } from '../../db/prepared.js';
import type { PersonsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const PERSON_COLUMNS = [
  'persons.id',
  'persons.name',
  'persons.email',
  'persons.email_normalized',
  'persons.domain',
  'persons.phone_number',
  'persons.social_profile_url',
  'persons.social_profile_normalized',
  'persons.slug',
  'persons.account_domain',
  'persons.created_at',
  'persons.updated_at',
] as const;

const NEWEST_FIRST = [{ ref: 'persons.id', direction: 'desc' as const }];

export type PersonRow = Awaited<ReturnType<typeof findPerson>> & {};
export type NewPersonRow = Omit<Insertable<PersonsTable>, 'tenant_id'>;

// Read on every GET /v0/persons/{id} and every person-log write: prepared once (ADR 0002).
const personById = preparedQuery((scope, p: { personId: string }) =>
  scope.selectFrom('persons').select(PERSON_COLUMNS).where('persons.id', '=', p.personId),
);

export async function findPerson(scope: TenantScope, personId: string) {
  const [row] = await personById(scope, { personId });
  return row;
}

/**
 * The person, locked until the transaction ends (PostgreSQL; SQLite's writer already holds the
 * database): for writes whose values derive from the row (its account link from domain and email).
 */
export async function lockPerson(scope: TenantScope, personId: string) {
  return forUpdate(
    scope.engine,
    scope.selectFrom('persons').select(PERSON_COLUMNS).where('persons.id', '=', personId),
  ).executeTakeFirst();
}

// A type (not an interface) so that it can be a prepared query's values.
export type Identity = {
  emailNormalized: string | null;
  phoneNumber: string | null;
  socialNormalized: string | null;
};

type IdentityKey = keyof Identity;
const IDENTITY_COLUMNS = [
  ['emailNormalized', 'persons.email_normalized'],
  ['phoneNumber', 'persons.phone_number'],
  ['socialNormalized', 'persons.social_profile_normalized'],
] as const;

// One prepared statement per combination of identities given (at most 7): every person-log write
// runs this look-up, and building it with Kysely each time cost more than running it.
const byIdentityShapes = new Map<string, ReturnType<typeof identityLookup>>();
function identityLookup(keys: readonly IdentityKey[]) {
  return preparedQuery((scope, p: Identity) =>
    scope
      .selectFrom('persons')
      .select(PERSON_COLUMNS)
      .where((eb) =>
        eb.or(IDENTITY_COLUMNS.filter(([key]) => keys.includes(key)).map(([key, column]) => eb(column, '=', p[key]))),
      ),
  );
}

/** Every person holding any of the identities (at most three rows: they are unique per tenant). */
export async function findByIdentity(scope: TenantScope, identity: Identity): Promise<PersonRow[]> {
  const keys = IDENTITY_COLUMNS.map(([key]) => key).filter((key) => identity[key] !== null);
  if (keys.length === 0) return [];
  const shape = keys.join(',');
  let lookup = byIdentityShapes.get(shape);
  if (lookup === undefined) byIdentityShapes.set(shape, (lookup = identityLookup(keys)));
  return lookup(scope, identity);
}

/** The insert of a new person that does nothing when it would break a unique identity or the slug. */
export function insertUnlessTaken(scope: TenantScope, p: Required<NewPersonRow>) {
  return scope
    .insertInto('persons', {
      id: p.id,
      name: p.name,
      email: p.email,
      email_normalized: p.email_normalized,
      domain: p.domain,
      phone_number: p.phone_number,
      social_profile_url: p.social_profile_url,
      social_profile_normalized: p.social_profile_normalized,
      slug: p.slug,
      account_domain: p.account_domain,
      created_at: p.created_at,
      updated_at: p.updated_at,
    })
    .onConflict((oc) => oc.doNothing());
}

const insertPersonUnlessTaken = preparedQuery((scope, p: Required<NewPersonRow>) =>
  insertUnlessTaken(scope, p).returning('persons.id'),
);

/** Inserts unless it would break a unique identity or the slug; returns whether it did. */
export async function insertPersonIfNew(scope: TenantScope, row: Required<NewPersonRow>): Promise<boolean> {
  const inserted = await insertPersonUnlessTaken(scope, row);
  return inserted.length > 0;
}

export async function insertPersons(scope: TenantScope, rows: NewPersonRow[]) {
  await scope.insertInto('persons', rows).execute();
}

export async function updatePerson(scope: TenantScope, personId: string, changes: Updateable<PersonsTable>) {
  await scope.updateTable('persons').set(changes).where('persons.id', '=', personId).execute();
}

export async function searchPersons(scope: TenantScope, text: string, window: KeysetWindow) {
  let query = scope
    .searchFrom('persons', text)
    .select(PERSON_COLUMNS)
    .where(substringMatch(scope.engine, 'persons', ['name', 'email', 'domain', 'phone_number'], text));
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('persons.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

/** Persons linked to the account of `domain`, newest first. */
export async function linkedPersons(scope: TenantScope, domain: string, limit: number) {
  return scope
    .selectFrom('persons')
    .select(PERSON_COLUMNS)
    .where('persons.account_domain', '=', domain)
    .orderBy('persons.id', 'desc')
    .limit(limit)
    .execute();
}

/** When the person's most recent log entry was written, or null. */
export async function latestLogAt(scope: TenantScope, personId: string): Promise<string | null> {
  const row = await scope
    .selectFrom('person_logs')
    .select((eb) => eb.fn.max('person_logs.created_at').as('latest'))
    .where('person_logs.person_id', '=', personId)
    .executeTakeFirst();
  return (row?.latest as string | null | undefined) ?? null;
}
