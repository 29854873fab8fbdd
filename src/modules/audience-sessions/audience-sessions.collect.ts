import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { AudienceSessionsTable, DB } from '../../db/schema.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import * as q from './audience-sessions.queries.js';

/**
 * Sessions recorded by the page runtime (docs/pages-runtime.md, Sessions). A session is one
 * visitor's visit to one audience page. The page's script starts it (`startSession`) and then
 * reports its totals (`recordActivity`); it ends after `SESSION_IDLE_MS` without activity.
 */

const UTM_MAX = 200;
const URL_MAX = 2048;
const TITLE_MAX = 255;
/**
 * Tokens a process has verified and remembers (a visit sends a handful of updates with the same
 * token; each would otherwise pay an HMAC). Only tokens that verified are kept, so forged ones
 * cannot evict them.
 */
const VERIFIED_TOKENS_KEPT = 100_000;

/** What a session token binds: the session, to its tenant, page and audience, and its start. */
export interface SessionRef {
  sessionId: string;
  pageId: string;
  audienceId: string;
  startedAtMs: number;
}

/**
 * Session tokens: `<sessionId>.<pageId>.<audienceId>.<start, unix ms>.<mac>`, an HMAC (service
 * secret `session-tokens`) over those and the tenant. Issued when a session starts and required by
 * every later event, so an event can only touch a session it started, of that page, audience and
 * tenant; checking it needs no database read.
 */
export class SessionTokens {
  readonly #secret: Buffer;
  /** `tenantId \n token` → what it names (the secret is fixed for the process, so an answer never changes). */
  readonly #verified = new LRUCache<string, SessionRef>({ max: VERIFIED_TOKENS_KEPT });

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'utf8');
  }

  static async load(db: Kysely<DB>, clock: Clock, secretKeys: readonly Buffer[]): Promise<SessionTokens> {
    return new SessionTokens(await loadServiceSecret(db, 'session-tokens', clock, secretKeys));
  }

  #mac(tenantId: string, parts: string): Buffer {
    return createHmac('sha256', this.#secret).update(`${tenantId}\n${parts}`).digest().subarray(0, 16);
  }

  issue(tenantId: string, ref: SessionRef): string {
    const parts = `${ref.sessionId}.${ref.pageId}.${ref.audienceId}.${ref.startedAtMs}`;
    return `${parts}.${this.#mac(tenantId, parts).toString('base64url')}`;
  }

  /** The session a token names for this tenant, or null (forged, another tenant's, malformed). */
  read(tenantId: string, token: string): SessionRef | null {
    const key = `${tenantId}\n${token}`;
    const known = this.#verified.get(key);
    if (known !== undefined) return known;
    const ref = this.#verify(tenantId, token);
    if (ref !== null) this.#verified.set(key, ref);
    return ref;
  }

  #verify(tenantId: string, token: string): SessionRef | null {
    const parts = token.split('.');
    if (parts.length !== 5) return null;
    const [sessionId, pageId, audienceId, started, mac] = parts as [string, string, string, string, string];
    if (!/^\d{1,15}$/.test(started) || !sessionId || !pageId || !audienceId) return null;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#mac(tenantId, parts.slice(0, 4).join('.'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return { sessionId, pageId, audienceId, startedAtMs: Number(started) };
  }
}

/** The landing page's address as stored: origin and path only (a query may carry anything). */
function storedPageUrl(url: URL): string {
  return `${url.origin}${url.pathname}`.slice(0, URL_MAX);
}

function utm(url: URL, name: string): string {
  return (url.searchParams.get(`utm_${name}`) ?? '').trim().slice(0, UTM_MAX);
}

/** A session row as the ingest writes it. */
export type SessionRow = Omit<Insertable<AudienceSessionsTable>, 'tenant_id'>;

/** What a new session of an audience needs to know of it; null when the audience is not served. */
export interface SessionAudience {
  pageId: string;
  title: string;
}

/**
 * Whether an audience's page is served (not archived, its page neither archived nor deleted, a
 * published version), and what its sessions record of it. One read; the page runtime keeps the
 * answer until the tenant's serving revision moves.
 */
export async function sessionAudience(scope: TenantScope, audienceId: string): Promise<SessionAudience | null> {
  const audience = await q.findAudienceForSession(scope, audienceId);
  if (
    audience === undefined ||
    audience.archived_at !== null ||
    audience.page_deleted_at !== null ||
    audience.page_status === 'archived' ||
    audience.version_id === null
  ) {
    return null;
  }
  return { pageId: audience.page_id, title: (audience.published_title ?? audience.page_title).slice(0, TITLE_MAX) };
}

/** A new session of a served audience, landed on at `landingUrl` at `now`: its reference and its row. */
export function newSession(
  audience: SessionAudience,
  input: { audienceId: string; landingUrl: URL },
  now: Date,
): { ref: SessionRef; row: SessionRow } {
  const startedAt = now.toISOString();
  const sessionId = newId('audienceSession');
  const url = input.landingUrl;
  const row: SessionRow = {
    id: sessionId,
    // Recorded by our own page script: the analytics id is the session's own.
    analytics_session_id: sessionId,
    page_id: audience.pageId,
    audience_id: input.audienceId,
    page_title: audience.title,
    page_url: storedPageUrl(url),
    form_submission_id: '',
    form_submission_identifier: '',
    form_submission_email: '',
    form_submission_phone: '',
    has_conversion: false,
    has_form_submit: false,
    is_bounce: true,
    max_scroll_depth_percentage: 0,
    questions_asked_count: 0,
    time_spent_seconds: 0,
    total_clicks_count: 0,
    session_started_at: startedAt,
    session_ended_at: startedAt,
    utm_source: utm(url, 'source'),
    utm_medium: utm(url, 'medium'),
    utm_campaign: utm(url, 'campaign'),
    utm_term: utm(url, 'term'),
    utm_content: utm(url, 'content'),
  };
  return { ref: { sessionId, pageId: audience.pageId, audienceId: input.audienceId, startedAtMs: now.getTime() }, row };
}

export interface Totals {
  /** Seconds the page was visible while the visitor was active. */
  engagedSeconds: number;
  /** Deepest scroll, percent of the page's height. */
  scrollDepth: number;
  clicks: number;
  /** A click on one of the page's actions. */
  conversion: boolean;
}

/** A session ends after this long without activity. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * What one event of a session writes (the ingest merges and writes it): engaged time cannot
 * exceed the time since the session started (plus a little clock slack); a session whose last
 * activity is older than `SESSION_IDLE_MS` has ended and is not written.
 */
export function activityOf(session: SessionRef, totals: Totals, nowMs: number): q.ActivityTotals {
  const elapsed = Math.max(0, (nowMs - session.startedAtMs) / 1000) + 5;
  return {
    sessionId: session.sessionId,
    pageId: session.pageId,
    audienceId: session.audienceId,
    engaged: Math.min(totals.engagedSeconds, Math.floor(elapsed)),
    scroll: totals.scrollDepth,
    clicks: totals.clicks,
    conversion: totals.conversion,
    nowMs,
    endedBeforeMs: nowMs - SESSION_IDLE_MS,
  };
}
