import { randomBytes } from 'node:crypto';
import type { Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { PersonsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { canonicalDomain } from '../../lib/domain-name.js';
import { newId } from '../../lib/ids.js';
import { recordAccountActivity } from '../account-activity/index.js';
import {
  accountDomainOf,
  normalizeEmail,
  normalizeSocialProfileUrl,
  slugBase,
  type Normalized,
} from './persons.identity.js';
import * as q from './persons.queries.js';
import type { Person, PersonPatchBody } from './persons.schemas.js';

function toPerson(row: q.PersonRow): Person {
  return {
    personId: row.id,
    name: row.name,
    email: row.email,
    domain: row.domain,
    slug: row.slug,
    phoneNumber: row.phone_number,
    socialProfileUrl: row.social_profile_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function valid(result: Normalized, path: string): string {
  if (!result.ok) throw validationFailed(path, result.reason);
  return result.value;
}

function validDomain(input: string, path: string): string {
  const result = canonicalDomain(input);
  if (!result.ok) throw validationFailed(path, result.reason);
  return result.domain;
}

export async function getPerson(scope: TenantScope, personId: string): Promise<Person> {
  const row = await q.findPerson(scope, personId);
  if (row === undefined) throw notFound('person', personId);
  return toPerson(row);
}

/** The persons linked to an account (by its canonical domain), newest first. */
export async function linkedPersons(scope: TenantScope, accountDomain: string, limit: number): Promise<Person[]> {
  return (await q.linkedPersons(scope, accountDomain, limit)).map(toPerson);
}

/** Search results carry no total (docs/api.md, search): counting every match would cost more than finding a page. */
export async function searchPersons(scope: TenantScope, text: string, window: KeysetWindow) {
  return { items: (await q.searchPersons(scope, text, window)).map(toPerson), totalCount: null };
}

/** The identities a request names, normalized; invalid ones are a 422 at their field. */
export interface IdentityInput {
  email?: string | undefined;
  phoneNumber?: string | undefined;
  socialProfileUrl?: string | undefined;
}

export function normalizeIdentity(input: IdentityInput): q.Identity {
  return {
    emailNormalized: input.email === undefined ? null : valid(normalizeEmail(input.email), '/body/email'),
    phoneNumber: input.phoneNumber ?? null,
    socialNormalized:
      input.socialProfileUrl === undefined
        ? null
        : valid(normalizeSocialProfileUrl(input.socialProfileUrl), '/body/socialProfileUrl'),
  };
}

const IDENTITY_FIELDS = [
  { field: 'email', column: 'email_normalized', key: 'emailNormalized' },
  { field: 'phoneNumber', column: 'phone_number', key: 'phoneNumber' },
  { field: 'socialProfileUrl', column: 'social_profile_normalized', key: 'socialNormalized' },
] as const;

/** The 409 for an identity `other` holds among those a request asked for. */
function identityTaken(other: q.PersonRow, identity: q.Identity) {
  const taken = IDENTITY_FIELDS.find((f) => identity[f.key] !== null && other[f.column] === identity[f.key])!;
  return conflict(
    'person_identity_taken',
    `Another person (${other.id}) already has this ${taken.field}; a person's email, phone number and social profile are unique.`,
    { personId: other.id, field: taken.field },
  );
}

/** Rounds of a PATCH that lost an identity race to a person who let it go again before we looked. */
const IDENTITY_RACE_ROUNDS = 3;

/**
 * PATCH semantics (docs/api.md, endpoint 10): absent fields are unchanged, `null` clears; email,
 * phone number and social profile stay unique in the tenant (409 `person_identity_taken` names
 * the person holding it); the slug never changes. Changing domain or email re-links the person to
 * the account of its new domain at once.
 */
export async function patchPerson(
  scope: TenantScope,
  clock: Clock,
  personId: string,
  patch: PersonPatchBody,
): Promise<Person> {
  const next: Partial<Record<keyof PersonsTable, string | null>> = {};
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.email !== undefined) {
    next.email = patch.email === null ? null : patch.email.trim();
    next.email_normalized = patch.email === null ? null : valid(normalizeEmail(patch.email), '/body/email');
  }
  if (patch.domain !== undefined)
    next.domain = patch.domain === null ? null : validDomain(patch.domain, '/body/domain');
  if (patch.phoneNumber !== undefined) next.phone_number = patch.phoneNumber;
  if (patch.socialProfileUrl !== undefined) {
    next.social_profile_url = patch.socialProfileUrl === null ? null : patch.socialProfileUrl.trim();
    next.social_profile_normalized =
      patch.socialProfileUrl === null
        ? null
        : valid(normalizeSocialProfileUrl(patch.socialProfileUrl), '/body/socialProfileUrl');
  }
  const requested: q.Identity = {
    emailNormalized: next.email_normalized ?? null,
    phoneNumber: next.phone_number ?? null,
    socialNormalized: next.social_profile_normalized ?? null,
  };

  for (let round = 1; ; round++) {
    try {
      return await scope.transaction((tx) => applyPatch(tx, clock, personId, next));
    } catch (error) {
      // Two PATCHes gave one identity to two persons at once: both passed the look-up, the unique
      // index let the first commit win. Answer as if the look-up had seen the winner.
      if (!isUniqueViolation(error) || scope.inTransaction) throw error;
      const holder = (await q.findByIdentity(scope, requested)).find((other) => other.id !== personId);
      if (holder !== undefined) throw identityTaken(holder, requested);
      if (round === IDENTITY_RACE_ROUNDS) throw error;
    }
  }
}

async function applyPatch(
  tx: TenantScope,
  clock: Clock,
  personId: string,
  next: Partial<Record<keyof PersonsTable, string | null>>,
): Promise<Person> {
  // Locked: the account link is computed from the row, and a concurrent PATCH of the other half
  // (domain vs email) must see this one's result, not the row as it was before.
  const row = await q.lockPerson(tx, personId);
  if (row === undefined) throw notFound('person', personId);

  const changes: Updateable<PersonsTable> = {};
  for (const [column, value] of Object.entries(next) as [keyof PersonsTable, string | null][]) {
    if (row[column as keyof q.PersonRow] !== value) (changes as Record<string, unknown>)[column] = value;
  }
  if (Object.keys(changes).length === 0) return toPerson(row);

  const identity: q.Identity = {
    emailNormalized: changes.email_normalized ?? null,
    phoneNumber: changes.phone_number ?? null,
    socialNormalized: changes.social_profile_normalized ?? null,
  };
  if (identity.emailNormalized ?? identity.phoneNumber ?? identity.socialNormalized) {
    const other = (await q.findByIdentity(tx, identity)).find((p) => p.id !== row.id);
    if (other !== undefined) throw identityTaken(other, identity);
  }

  const accountDomain = accountDomainOf({
    domain: next.domain !== undefined ? next.domain : row.domain,
    email_normalized: next.email_normalized !== undefined ? next.email_normalized : row.email_normalized,
  });
  if (accountDomain !== row.account_domain) changes.account_domain = accountDomain;
  changes.updated_at = isoNow(clock);
  await q.updatePerson(tx, personId, changes);

  if (changes.account_domain) {
    // The person's history comes along to its new account.
    const latest = await q.latestLogAt(tx, personId);
    if (latest !== null) await recordAccountActivity(tx, changes.account_domain, latest);
  }
  return toPerson((await q.findPerson(tx, personId))!);
}

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
