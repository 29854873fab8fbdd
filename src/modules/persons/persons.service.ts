import type { Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { PersonsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { canonicalDomain } from '../../lib/domain-name.js';
import { recordAccountActivity } from '../account-activity/index.js';
import {
  accountDomainOf,
  IDENTITY_FIELDS,
  normalizeEmail,
  normalizeSocialProfileUrl,
  requireValid,
} from './persons.identity.js';
import * as q from './persons.queries.js';
import type { Person, PersonPatchBody } from './persons.schemas.js';

/**
 * Persons as the API manages them: read, search, PATCH (endpoint 10). Finding or creating the
 * person a log entry is about is persons.resolution.ts; how identities are recognised,
 * persons.identity.ts.
 */

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
    next.email_normalized = patch.email === null ? null : requireValid(normalizeEmail(patch.email), '/body/email');
  }
  if (patch.domain !== undefined)
    next.domain = patch.domain === null ? null : validDomain(patch.domain, '/body/domain');
  if (patch.phoneNumber !== undefined) next.phone_number = patch.phoneNumber;
  if (patch.socialProfileUrl !== undefined) {
    next.social_profile_url = patch.socialProfileUrl === null ? null : patch.socialProfileUrl.trim();
    next.social_profile_normalized =
      patch.socialProfileUrl === null
        ? null
        : requireValid(normalizeSocialProfileUrl(patch.socialProfileUrl), '/body/socialProfileUrl');
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
