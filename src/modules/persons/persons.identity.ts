import { validationFailed } from '../../http/errors.js';
import { canonicalDomain } from '../../lib/domain-name.js';
import { isFreeMailDomain } from '../../lib/mail-domains.js';
import type { Identity } from './persons.queries.js';

/**
 * How a person is recognized (docs/api.md, Persons): by email (case-insensitive), phone number
 * (E.164, exact) or social profile URL (normalized below). Pure functions, shared by the person
 * log write path and PATCH /v0/persons.
 */

export type Normalized = { ok: true; value: string } | { ok: false; reason: string };

/** The three identities: the request's field, the person's column, the normalized key. */
export const IDENTITY_FIELDS = [
  { field: 'email', column: 'email_normalized', key: 'emailNormalized' },
  { field: 'phoneNumber', column: 'phone_number', key: 'phoneNumber' },
  { field: 'socialProfileUrl', column: 'social_profile_normalized', key: 'socialNormalized' },
] as const;

/** The normalized value, or a 422 at `path` saying why it is not one. */
export function requireValid(result: Normalized, path: string): string {
  if (!result.ok) throw validationFailed(path, result.reason);
  return result.value;
}

/** The identities a request names, normalized; invalid ones are a 422 at their field. */
export interface IdentityInput {
  email?: string | undefined;
  phoneNumber?: string | undefined;
  socialProfileUrl?: string | undefined;
}

export function normalizeIdentity(input: IdentityInput): Identity {
  return {
    emailNormalized: input.email === undefined ? null : requireValid(normalizeEmail(input.email), '/body/email'),
    phoneNumber: input.phoneNumber ?? null,
    socialNormalized:
      input.socialProfileUrl === undefined
        ? null
        : requireValid(normalizeSocialProfileUrl(input.socialProfileUrl), '/body/socialProfileUrl'),
  };
}

/** A pragmatic address shape: one `@`, no spaces, a dot in the domain. Full RFC 5322 is not wanted. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeEmail(email: string): Normalized {
  const value = email.trim().toLowerCase();
  if (!EMAIL.test(value)) return { ok: false, reason: 'must be an email address like name@example.com' };
  return { ok: true, value };
}

/**
 * The identity of a social profile: host without `www.` plus path, lowercased, without scheme,
 * query, fragment or trailing slash. `https://www.LinkedIn.com/in/JaneDoe/?utm_source=x` and
 * `linkedin.com/in/janedoe` are the same profile (the big networks treat profile paths
 * case-insensitively).
 */
export function normalizeSocialProfileUrl(input: string): Normalized {
  const trimmed = input.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { ok: false, reason: 'must be an http(s) URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'must be an http(s) URL' };
  const host = canonicalDomain(url.hostname);
  if (!host.ok) return { ok: false, reason: `must be an http(s) URL with a public host name (host ${host.reason})` };
  const path = url.pathname.replace(/\/+$/, '');
  return { ok: true, value: `${host.domain}${path}`.toLowerCase() };
}

/** The email's domain when it says which company the person works for (not a free-mail or disposable provider). */
export function workEmailDomain(emailNormalized: string | null): string | null {
  if (emailNormalized === null) return null;
  const at = emailNormalized.lastIndexOf('@');
  const domain = canonicalDomain(emailNormalized.slice(at + 1));
  if (!domain.ok || isFreeMailDomain(domain.domain)) return null;
  return domain.domain;
}

/** The account a person links to: its own domain, else the domain of its work email. */
export function accountDomainOf(person: { domain: string | null; email_normalized: string | null }): string | null {
  return person.domain ?? workEmailDomain(person.email_normalized);
}

const MAX_SLUG = 60;

/** `Jane Doe-Müller` → `jane-doe-muller`; the base of a person's slug. */
function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/-+$/, '');
  return slug.length > 0 ? slug : 'person';
}

/** Where a new person's slug comes from: its name, else the local part of its email, else the rest. */
export function slugBase(fields: {
  name?: string | undefined;
  email?: string | undefined;
  phoneNumber?: string | undefined;
  socialProfileUrl?: string | undefined;
}): string {
  if (fields.name !== undefined) return slugify(fields.name);
  if (fields.email !== undefined) return slugify(fields.email.split('@')[0]!);
  if (fields.phoneNumber !== undefined) return slugify(fields.phoneNumber);
  const path = (fields.socialProfileUrl ?? '').split(/[?#]/)[0]!;
  return slugify(path.split('/').filter(Boolean).pop() ?? '');
}
