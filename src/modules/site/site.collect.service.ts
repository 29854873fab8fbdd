import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, type FieldError } from '../../http/errors.js';
import { strict } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import { LRUCache } from 'lru-cache';
import {
  activityOf,
  newSession,
  sessionAudience,
  SESSION_IDLE_MS,
  type SessionAudience,
  type SessionIngest,
  type SessionRef,
  type SessionTokens,
} from '../audience-sessions/index.js';
import type { ServingRevisions } from '../serving/index.js';
import type { PageSigner } from './site.tokens.js';

/**
 * The page script's reports (docs/pages-runtime.md, Collection protocol): a `start` when a page is
 * viewed, then `update`s with the visit's totals. An event can only ever write a session of the
 * host's tenant, for an audience whose page carries its signed view token, and update only a
 * session it started (signed session token). A refused event writes nothing.
 */

const StartEvent = Type.Object(
  {
    t: Type.Literal('start'),
    /** The page's view token (its `<meta name="ap-view">`). */
    v: Type.String({ minLength: 1, maxLength: 300 }),
    /** The landing URL (location.href). */
    u: Type.String({ minLength: 1, maxLength: 4096 }),
  },
  strict,
);

const UpdateEvent = Type.Object(
  {
    t: Type.Literal('update'),
    /** The session token from the start. */
    s: Type.String({ minLength: 1, maxLength: 300 }),
    /** Engaged seconds so far. */
    e: Type.Integer({ minimum: 0, maximum: 86_400 }),
    /** Deepest scroll so far, percent. */
    d: Type.Integer({ minimum: 0, maximum: 100 }),
    /** Clicks so far. */
    c: Type.Integer({ minimum: 0, maximum: 100_000 }),
    /** Whether one of the page's actions was clicked. */
    x: Type.Boolean(),
  },
  strict,
);

const checkers = {
  start: TypeCompiler.Compile(StartEvent),
  update: TypeCompiler.Compile(UpdateEvent),
};

/** An event as read and checked: the audience whose page it reports on, and what it asks to write. */
export type VisitEvent =
  | { t: 'start'; audienceId: string; landingUrl: URL }
  | { t: 'update'; audienceId: string; session: SessionRef; totals: Static<typeof UpdateEvent> };

/** Audiences whose "served?" answer a process keeps (until their tenant's serving revision moves). */
const AUDIENCES_KEPT = 10_000;
/** Sessions whose last event a process remembers (to answer `session_ended` without a read). */
const SESSIONS_KEPT = 100_000;

export class CollectService {
  readonly #audiences = new LRUCache<string, { audience: SessionAudience | null; generation: number }>({
    max: AUDIENCES_KEPT,
  });
  /** session id → when this process last accepted an event of it (ms). */
  readonly #lastSeen = new LRUCache<string, number>({ max: SESSIONS_KEPT });

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly signer: PageSigner,
    private readonly tokens: SessionTokens,
    private readonly ingest: SessionIngest,
    private readonly revisions: ServingRevisions,
  ) {}

  /**
   * The event in `body`, validated and checked against the tenant's signatures (a 422 otherwise);
   * `host` is where it was sent (a start's landing URL must be on it). Writes nothing.
   */
  read(tenantId: string, body: unknown, host: string | undefined): VisitEvent {
    const kind = body !== null && typeof body === 'object' ? (body as { t?: unknown }).t : undefined;
    if (kind === 'start') {
      const event = validated(checkers.start, body);
      const audienceId = this.signer.readViewToken(tenantId, event.v);
      if (audienceId === null) {
        throw invalidEvent('v', 'is not a page of this site', 'is not the view token of a page of this site');
      }
      return { t: 'start', audienceId, landingUrl: landingUrl(event.u, host) };
    }
    if (kind === 'update') {
      const event = validated(checkers.update, body);
      const session = this.tokens.read(tenantId, event.s);
      if (session === null) {
        throw invalidEvent('s', 'is not a session this page started', 'is not a session started on this site');
      }
      return { t: 'update', audienceId: session.audienceId, session, totals: event };
    }
    throw invalidEvent('t', 'must be "start" or "update"', 'must be "start" or "update"');
  }

  /**
   * Starts the session (written with the next batch); returns its token. 404 when the audience's
   * page is no longer served.
   */
  async start(tenantId: string, event: Extract<VisitEvent, { t: 'start' }>): Promise<string> {
    this.#accepting();
    const audience = await this.#audience(tenantId, event.audienceId);
    if (audience === null) throw notFound('page', event.audienceId);
    const now = this.clock.now();
    const { ref, row } = newSession(audience, event, now);
    this.ingest.start(tenantId, row);
    this.#lastSeen.set(ref.sessionId, now.getTime());
    return this.tokens.issue(tenantId, ref);
  }

  /**
   * Records the session's totals so far (with the next batch); `session_ended` (409) when this
   * process knows it has ended. One it does not know (started elsewhere) is checked when written.
   */
  update(tenantId: string, { session, totals }: Extract<VisitEvent, { t: 'update' }>): void {
    this.#accepting();
    const now = this.clock.now().getTime();
    const last = this.#lastSeen.get(session.sessionId);
    if (last !== undefined && last < now - SESSION_IDLE_MS) {
      throw new AppError('session_ended', 'The session has ended (30 minutes without activity); start a new one.');
    }
    this.#lastSeen.set(session.sessionId, now);
    const activity = activityOf(
      session,
      { engagedSeconds: totals.e, scrollDepth: totals.d, clicks: totals.c, conversion: totals.x },
      now,
    );
    this.ingest.update(tenantId, activity, session.startedAtMs);
  }

  #accepting() {
    if (!this.ingest.accepting) {
      throw new AppError('service_unavailable', 'Visit events cannot be recorded right now; retry later.');
    }
  }

  /** Whether the audience is served, as of its tenant's serving revision (one read per change). */
  async #audience(tenantId: string, audienceId: string): Promise<SessionAudience | null> {
    const key = `${tenantId} ${audienceId}`;
    const known = this.#audiences.get(key);
    if (known !== undefined && this.revisions.current(tenantId, known.generation)) return known.audience;
    const generation = this.revisions.generation;
    const audience = await sessionAudience(TenantScope.of(this.database, tenantId), audienceId);
    this.#audiences.set(key, { audience, generation });
    return audience;
  }
}

function validated<T extends TSchema>(checker: ReturnType<typeof TypeCompiler.Compile<T>>, body: unknown): Static<T> {
  if (checker.Check(body)) return body;
  const errors: FieldError[] = [];
  for (const error of checker.Errors(body)) {
    const path = `/body${error.path}`;
    if (!errors.some((e) => e.path === path)) errors.push({ path, message: error.message.toLowerCase() });
    if (errors.length >= 10) break;
  }
  throw new AppError(
    'validation_failed',
    `The event is invalid: ${errors[0]?.path ?? '/body'} ${errors[0]?.message ?? ''}.`,
    errors,
  );
}

/** The 422 of an event whose `field` is wrong: `detail` for people, `message` at the field. */
function invalidEvent(field: string, detail: string, message: string): AppError {
  return new AppError('validation_failed', `The event is invalid: /body/${field} ${detail}.`, [
    { path: `/body/${field}`, message },
  ]);
}

/** The landing URL: an http(s) URL on the host the event was sent to (422 otherwise). */
function landingUrl(raw: string, host: string | undefined): URL {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // refused below
  }
  if (
    url === null ||
    !/^https?:$/.test(url.protocol) ||
    host === undefined ||
    url.host.toLowerCase() !== host.toLowerCase()
  ) {
    throw invalidEvent('u', 'must be this page’s address', 'must be an http(s) URL on this host');
  }
  return url;
}
