import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isbot } from 'isbot';
import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, type FieldError } from '../../http/errors.js';
import { strict } from '../../http/schemas.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import type { Clock } from '../../lib/clock.js';
import { recordActivity, startSession, type SessionTokens } from '../audience-sessions/index.js';
import type { PageSigner } from './site.tokens.js';

/**
 * `POST /_ap/collect` on a page host: the page script's reports (docs/pages-runtime.md,
 * Collection protocol). Public (no key), JSON in a body of at most 8 KiB (sent as text/plain by
 * `navigator.sendBeacon`), strictly validated. It can only ever write a session of the host's
 * tenant, for an audience whose page carries its signed view token, and update only a session
 * it started (signed session token). Refused events answer 4xx and write nothing.
 */
export const COLLECT_BODY_LIMIT = 8 * 1024;

export const StartEvent = Type.Object(
  {
    t: Type.Literal('start'),
    /** The page's view token (its `<meta name="ap-view">`). */
    v: Type.String({ minLength: 1, maxLength: 300 }),
    /** The landing URL (location.href). */
    u: Type.String({ minLength: 1, maxLength: 4096 }),
  },
  strict,
);

export const UpdateEvent = Type.Object(
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

export interface Collector {
  handle(request: FastifyRequest, reply: FastifyReply, tenantId: string): Promise<unknown>;
}

export function collector(deps: {
  database: Database;
  clock: Clock;
  signer: PageSigner;
  tokens: SessionTokens;
  perClientPerSecond: number;
  perPagePerSecond: number;
}): Collector {
  const { database, clock, signer, tokens } = deps;
  const clients =
    deps.perClientPerSecond > 0 ? new TokenBuckets(deps.perClientPerSecond, deps.perClientPerSecond * 5) : null;
  const pages = deps.perPagePerSecond > 0 ? new TokenBuckets(deps.perPagePerSecond, deps.perPagePerSecond * 5) : null;

  const limit = (buckets: TokenBuckets | null, key: string, reply: FastifyReply, what: string) => {
    if (buckets === null) return;
    const taken = buckets.take(key);
    if (!taken.ok) {
      reply.header('retry-after', String(taken.retryAfterSeconds));
      throw new AppError('rate_limited', `Too many events ${what}; retry after ${taken.retryAfterSeconds} s.`);
    }
  };

  return {
    async handle(request, reply, tenantId) {
      reply.header('cache-control', 'no-store');
      // Only the page itself reports: a browser says where a request comes from.
      const site = request.headers['sec-fetch-site'];
      if (site === 'cross-site' || site === 'same-site') {
        throw new AppError('cross_origin_request', 'Events are accepted from the page’s own origin only.');
      }
      limit(clients, request.ip, reply, 'from this address');
      // Global Privacy Control, and declared crawlers: nothing is recorded (docs/pages-runtime.md).
      if (request.headers['sec-gpc'] === '1' || isbot(request.headers['user-agent'] ?? '')) {
        return reply.code(204).send();
      }
      const body = request.body as { t?: unknown } | null;
      const scope = TenantScope.of(database, tenantId);
      if (body !== null && typeof body === 'object' && body.t === 'start') {
        const event = validated(checkers.start, body);
        const audienceId = signer.readViewToken(tenantId, event.v);
        if (audienceId === null) {
          throw new AppError('validation_failed', 'The event is invalid: /body/v is not a page of this site.', [
            { path: '/body/v', message: 'is not the view token of a page of this site' },
          ]);
        }
        const url = landingUrl(event.u, request.headers.host);
        limit(pages, audienceId, reply, 'for this page');
        const session = await startSession(scope, clock, { audienceId, landingUrl: url });
        if (session === null) throw notFound('page', audienceId);
        return reply.code(201).send({ s: tokens.issue(tenantId, session) });
      }
      if (body !== null && typeof body === 'object' && body.t === 'update') {
        const event = validated(checkers.update, body);
        const session = tokens.read(tenantId, event.s);
        if (session === null) {
          throw new AppError('validation_failed', 'The event is invalid: /body/s is not a session this page started.', [
            { path: '/body/s', message: 'is not a session started on this site' },
          ]);
        }
        limit(pages, session.audienceId, reply, 'for this page');
        const recorded = await recordActivity(scope, clock, session, {
          engagedSeconds: event.e,
          scrollDepth: event.d,
          clicks: event.c,
          conversion: event.x,
        });
        if (!recorded) {
          throw new AppError('session_ended', 'The session has ended (30 minutes without activity); start a new one.');
        }
        return reply.code(204).send();
      }
      throw new AppError('validation_failed', 'The event is invalid: /body/t must be "start" or "update".', [
        { path: '/body/t', message: 'must be "start" or "update"' },
      ]);
    },
  };
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
    throw new AppError('validation_failed', 'The event is invalid: /body/u must be this page’s address.', [
      { path: '/body/u', message: 'must be an http(s) URL on this host' },
    ]);
  }
  return url;
}
