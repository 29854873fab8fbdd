import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, validationFailed } from '../../http/errors.js';
import { HOUR_MS, isoNow, MINUTE_MS, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import * as q from './console.queries.js';

/**
 * Signing in to the console (docs/console.md#sign-in): users of one tenant, one-time links that
 * start a session, sessions behind a cookie. Secrets (link tokens, session tokens) are 256 random
 * bits; only their SHA-256 is stored.
 */

/** How long a sign-in link may be used (once). */
const SIGN_IN_LINK_TTL_MS = 15 * MINUTE_MS;
/** The longest a session lasts, however active. */
const SESSION_MAX_MS = 12 * HOUR_MS;
/** A session's last use is written at most this often (a write per page view would be waste). */
const TOUCH_EVERY_MS = MINUTE_MS;
const MAX_EMAIL = 254;
const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;
/** The most users one console screen lists. */
const MAX_USERS_LISTED = 500;

function secret(): string {
  return randomBytes(32).toString('base64url');
}

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** An e-mail address as the console stores it (trimmed, lower case), or a 422 for `field`. */
function consoleEmail(raw: unknown, field = '/body/email'): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (email.length === 0 || email.length > MAX_EMAIL || !EMAIL.test(email))
    throw validationFailed(field, 'Give an e-mail address (name@example.com).');
  return email;
}

export interface Invitation {
  userId: string;
  email: string;
  /** The one-time token of the sign-in link: shown once, never stored. */
  token: string;
  expiresAt: string;
}

/**
 * Makes `email` a console user of the scope's tenant (or finds the one there is) and issues a
 * sign-in link for them. `invitedBy`: the inviting console user, null for the operator.
 */
export async function inviteUser(
  scope: TenantScope,
  clock: Clock,
  input: { email: string; invitedBy: string | null },
): Promise<Invitation> {
  const email = consoleEmail(input.email);
  const now = isoNow(clock);
  const token = secret();
  const expiresAt = new Date(clock.now().getTime() + SIGN_IN_LINK_TTL_MS).toISOString();
  const userId = await scope.transaction(async (tx) => {
    let user = await q.findUserByEmail(tx, email);
    if (user === undefined) {
      await q.insertUser(tx, { id: newId('consoleUser'), email, invited_by: input.invitedBy, created_at: now });
      user = (await q.findUserByEmail(tx, email))!;
    }
    await q.insertSignInLink(tx, {
      token_hash: hashOf(token),
      user_id: user.id,
      created_at: now,
      expires_at: expiresAt,
    });
    return user.id;
  });
  return { userId, email, token, expiresAt };
}

/** The operator's invitation (CLI, demo): the tenant must exist. */
export async function inviteAsOperator(
  database: Database,
  clock: Clock,
  input: { tenantId: string; email: string },
): Promise<Invitation> {
  if (!(await q.tenantExists(database.kysely, input.tenantId))) throw notFound('tenant', input.tenantId);
  return inviteUser(TenantScope.of(database, input.tenantId), clock, { email: input.email, invitedBy: null });
}

export async function listUsers(scope: TenantScope) {
  const rows = await q.listUsers(scope, MAX_USERS_LISTED);
  return rows.map((r) => ({
    userId: r.id,
    email: r.email,
    createdAt: r.created_at,
    lastSignInAt: r.last_sign_in_at,
    invitedByOperator: r.invited_by === null,
  }));
}

/** Whether a sign-in link may still be used (shown before the user presses "Sign in"). */
export async function signInLinkUsable(db: Kysely<DB>, clock: Clock, token: string): Promise<boolean> {
  const link = await q.findSignInLink(db, hashOf(token));
  return link !== undefined && link.used_at === null && link.expires_at > isoNow(clock);
}

export interface NewSession {
  /** The cookie's value: shown to the browser once, stored as its hash. */
  token: string;
  tenantId: string;
  userId: string;
}

/** Uses a sign-in link (once, before it expires) and starts a session; an unusable link is a 410. */
export async function signIn(database: Database, clock: Clock, token: string): Promise<NewSession> {
  const linkHash = hashOf(token);
  const link = await q.findSignInLink(database.kysely, linkHash);
  const refused = new AppError('url_expired', 'This sign-in link has expired or was already used.');
  if (link === undefined) throw refused;
  const scope = TenantScope.of(database, link.tenant_id);
  const now = isoNow(clock);
  const sessionToken = secret();
  await scope.transaction(async (tx) => {
    if (!(await q.useSignInLink(tx, linkHash, now))) throw refused;
    await q.insertSession(tx, {
      token_hash: hashOf(sessionToken),
      user_id: link.user_id,
      csrf_token: secret(),
      created_at: now,
    });
    await q.markSignedIn(tx, link.user_id, now);
  });
  return { token: sessionToken, tenantId: link.tenant_id, userId: link.user_id };
}

/** A signed-in user, as every console screen sees them. */
export interface ConsoleUser {
  tenantId: string;
  userId: string;
  email: string;
  /** The session's anti-CSRF token (forms carry it back). */
  csrfToken: string;
  scope: TenantScope;
}

/**
 * The session behind a cookie's token, or null when there is none, it was signed out, or it is
 * over: unused for `idleMs`, or older than the longest a session lasts (then it is ended here).
 */
export async function sessionOf(
  database: Database,
  clock: Clock,
  token: string,
  idleMs: number,
): Promise<ConsoleUser | null> {
  const tokenHash = hashOf(token);
  const row = await q.findSession(database.kysely, tokenHash);
  if (row === undefined) return null;
  const now = clock.now().getTime();
  const scope = TenantScope.of(database, row.tenant_id);
  const lastSeen = Date.parse(row.last_seen_at);
  if (now - lastSeen >= idleMs || now - Date.parse(row.created_at) >= SESSION_MAX_MS) {
    await q.endSession(scope, tokenHash, isoNow(clock));
    return null;
  }
  if (now - lastSeen >= TOUCH_EVERY_MS) await q.touchSession(scope, tokenHash, isoNow(clock));
  return { tenantId: row.tenant_id, userId: row.user_id, email: row.email, csrfToken: row.csrf_token, scope };
}

export async function signOut(database: Database, clock: Clock, token: string): Promise<void> {
  const row = await q.findSession(database.kysely, hashOf(token));
  if (row === undefined) return;
  await q.endSession(TenantScope.of(database, row.tenant_id), hashOf(token), isoNow(clock));
}

/** Whether `given` is the session's anti-CSRF token (in constant time). */
export function csrfTokenMatches(user: ConsoleUser, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(user.csrfToken, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
