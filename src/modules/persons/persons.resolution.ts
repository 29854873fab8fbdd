import { randomBytes } from 'node:crypto';
import type { Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { PersonsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, validationFailed } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { accountDomainOf, IDENTITY_FIELDS, slugBase, type IdentityInput } from './persons.identity.js';
import * as q from './persons.queries.js';

/**
 * Which person a log entry is about (docs/api.md, endpoint 11), found or created by the identity
 * rules of persons.identity.ts. Every writer of a person log goes through here (person-logs'
 * `writePersonLog`), so a person is recognised the same way whoever writes about them.
 */

export interface ResolveInput extends IdentityInput {
  personId?: string | undefined;
  name?: string | undefined;
}

const SLUG_ATTEMPTS = 5;

/**
 * Finds or creates the person a log entry is about (docs/api.md, endpoint 11): `personId` names
 * it; otherwise the first person matching the email, then the phone number, then the social
 * profile; otherwise a new one. A matched person only gains the identities it lacks (never
 * overwritten, never taken from another person). Must run inside a transaction. `insertTried`:
 * the caller already tried to insert `personToCreate` in this request, and nothing was inserted.
 */
export async function resolvePerson(
  tx: TenantScope,
  clock: Clock,
  input: ResolveInput,
  identity: q.Identity,
  options: { insertTried?: boolean } = {},
): Promise<{ person: q.PersonRow; created: boolean }> {
  let candidates: q.PersonRow[] | null = null;
  const lookup = async () => (candidates ??= await q.findByIdentity(tx, identity));
  const hasIdentity = namesAnIdentity(identity);

  let person: q.PersonRow | undefined;
  if (input.personId !== undefined) {
    person = await q.findPerson(tx, input.personId);
    if (person === undefined)
      throw validationFailed('/body/personId', 'must be the id of an existing person of this tenant');
  } else {
    if (!hasIdentity) {
      throw new AppError(
        'validation_failed',
        'The request does not say which person the entry is about: send personId, email, phoneNumber or socialProfileUrl.',
        [{ path: '/body', message: 'must include personId, email, phoneNumber or socialProfileUrl' }],
      );
    }
    // Insert first: each identity is unique in the tenant, so an insert that succeeds proves that
    // nobody holds any of them (the look-up would have found nobody). A new person then costs one
    // statement instead of two; an insert that conflicts (identity or slug) goes the long way.
    if (!options.insertTried) {
      const fresh = newPersonRow(clock, input, identity);
      if (await q.insertPersonIfNew(tx, fresh)) return { person: fresh, created: true };
    }
    person = pick(await lookup(), identity);
    if (person === undefined) {
      const created = await createPerson(tx, clock, input, identity);
      if (created.created) return created;
      candidates = null;
      person = created.person;
    }
  }

  if (hasIdentity) await fillMissingIdentities(tx, clock, person, input, identity, await lookup());
  return { person, created: false };
}

/**
 * The person resolvePerson tries to create first for `input` (plain slug), or undefined when
 * `input` names its person by id or names no identity. For a caller that makes this insert part
 * of a larger statement (a person-log write on PostgreSQL, where each statement is a round trip):
 * when that insert does nothing, resolvePerson goes on from there (`insertTried`).
 */
export function personToCreate(clock: Clock, input: ResolveInput, identity: q.Identity): q.PersonRow | undefined {
  if (input.personId !== undefined || !namesAnIdentity(identity)) return undefined;
  return newPersonRow(clock, input, identity);
}

function namesAnIdentity(identity: q.Identity): boolean {
  return identity.emailNormalized !== null || identity.phoneNumber !== null || identity.socialNormalized !== null;
}

function pick(candidates: q.PersonRow[], identity: q.Identity): q.PersonRow | undefined {
  for (const f of IDENTITY_FIELDS) {
    const value = identity[f.key];
    if (value === null) continue;
    const found = candidates.find((c) => c[f.column] === value);
    if (found) return found;
  }
  return undefined;
}

function newPersonRow(clock: Clock, input: ResolveInput, identity: q.Identity): q.PersonRow {
  const now = isoNow(clock);
  const email = input.email?.trim() ?? null;
  return {
    id: newId('person'),
    name: input.name ?? email ?? input.phoneNumber ?? input.socialProfileUrl!.trim(),
    email,
    email_normalized: identity.emailNormalized,
    domain: null,
    phone_number: identity.phoneNumber,
    social_profile_url: input.socialProfileUrl?.trim() ?? null,
    social_profile_normalized: identity.socialNormalized,
    slug: slugBase(input),
    account_domain: accountDomainOf({ domain: null, email_normalized: identity.emailNormalized }),
    created_at: now,
    updated_at: now,
  };
}

async function createPerson(
  tx: TenantScope,
  clock: Clock,
  input: ResolveInput,
  identity: q.Identity,
): Promise<{ person: q.PersonRow; created: boolean }> {
  const row = newPersonRow(clock, input, identity);
  const base = row.slug;
  // Attempt 0, the plain slug, was the insert-first of resolvePerson.
  for (let attempt = 1; attempt < SLUG_ATTEMPTS; attempt++) {
    row.slug = `${base}-${randomBytes(4).readUInt32BE().toString(36)}`;
    if (await q.insertPersonIfNew(tx, row)) return { person: row, created: true };
    // Either a concurrent request created this identity first (use that person), or the slug is taken.
    const existing = pick(await q.findByIdentity(tx, identity), identity);
    if (existing) return { person: existing, created: false };
  }
  throw new Error(`could not find a free slug for "${base}" after ${SLUG_ATTEMPTS} attempts`);
}

/** Gives a matched person the identities it lacks, unless another person already holds them. */
async function fillMissingIdentities(
  tx: TenantScope,
  clock: Clock,
  person: q.PersonRow,
  input: ResolveInput,
  identity: q.Identity,
  candidates: q.PersonRow[],
) {
  // Most log entries name identities the person already has: decide that from the row as read,
  // and lock only when there is something to fill.
  if (Object.keys(missingIdentities(person, input, identity, candidates)).length === 0) return;
  // The account link derives from the person's domain and email: read them locked, so that a
  // concurrent PATCH {domain} is either seen here or sees this fill (never a stale link).
  const current = await q.lockPerson(tx, person.id);
  if (current === undefined) return;
  Object.assign(person, current);
  const changes = missingIdentities(person, input, identity, candidates);
  if (Object.keys(changes).length === 0) return;
  changes.updated_at = isoNow(clock);
  const accountDomain = accountDomainOf({
    domain: person.domain,
    email_normalized: changes.email_normalized ?? person.email_normalized,
  });
  if (accountDomain !== person.account_domain) changes.account_domain = accountDomain;

  // A concurrent request (PostgreSQL) may have given one of these to another person since we
  // looked: then the fill is skipped rather than failing the log entry.
  try {
    await tx.savepoint('fill_identities', (sp) => q.updatePerson(sp, person.id, changes));
    Object.assign(person, changes);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
}

/** The identities of the request that `person` lacks and no other candidate holds. */
function missingIdentities(
  person: q.PersonRow,
  input: ResolveInput,
  identity: q.Identity,
  candidates: q.PersonRow[],
): Updateable<PersonsTable> {
  const changes: Updateable<PersonsTable> = {};
  const heldByOther = (column: (typeof IDENTITY_FIELDS)[number]['column'], value: string) =>
    candidates.some((c) => c.id !== person.id && c[column] === value);
  if (person.email_normalized === null && identity.emailNormalized !== null) {
    if (!heldByOther('email_normalized', identity.emailNormalized)) {
      changes.email = input.email!.trim();
      changes.email_normalized = identity.emailNormalized;
    }
  }
  if (person.phone_number === null && identity.phoneNumber !== null) {
    if (!heldByOther('phone_number', identity.phoneNumber)) changes.phone_number = identity.phoneNumber;
  }
  if (person.social_profile_normalized === null && identity.socialNormalized !== null) {
    if (!heldByOther('social_profile_normalized', identity.socialNormalized)) {
      changes.social_profile_url = input.socialProfileUrl!.trim();
      changes.social_profile_normalized = identity.socialNormalized;
    }
  }
  return changes;
}
