import type { Insertable, Updateable } from 'kysely';
import { substringMatch } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { PersonsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

export const PERSON_COLUMNS = [
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

export async function findPerson(scope: TenantScope, personId: string) {
  return scope.selectFrom('persons').select(PERSON_COLUMNS).where('persons.id', '=', personId).executeTakeFirst();
}

export interface Identity {
  emailNormalized: string | null;
  phoneNumber: string | null;
  socialNormalized: string | null;
}

/** Every person holding any of the identities (at most three rows: they are unique per tenant). */
export async function findByIdentity(scope: TenantScope, identity: Identity): Promise<PersonRow[]> {
  return scope
    .selectFrom('persons')
    .select(PERSON_COLUMNS)
    .where((eb) => {
      const any = [];
      if (identity.emailNormalized !== null) any.push(eb('persons.email_normalized', '=', identity.emailNormalized));
      if (identity.phoneNumber !== null) any.push(eb('persons.phone_number', '=', identity.phoneNumber));
      if (identity.socialNormalized !== null)
        any.push(eb('persons.social_profile_normalized', '=', identity.socialNormalized));
      return eb.or(any);
    })
    .execute();
}

/** Inserts unless it would break a unique identity or the slug; returns whether it did. */
export async function insertPersonIfNew(scope: TenantScope, row: NewPersonRow): Promise<boolean> {
  const inserted = await scope
    .insertInto('persons', row)
    .onConflict((oc) => oc.doNothing())
    .returning('persons.id')
    .executeTakeFirst();
  return inserted !== undefined;
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
