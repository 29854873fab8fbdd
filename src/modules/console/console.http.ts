import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError } from '../../http/errors.js';
import { csrfTokenMatches, type ConsoleUser } from './console.auth.service.js';

/**
 * What every console screen shares over HTTP: its cookie, its headers, the same-origin and
 * anti-CSRF checks of state-changing requests, the signed-in user of a request.
 */

/**
 * The console's policy: only its own stylesheet, script, images and frames; forms post to itself;
 * no framing by others. Nothing is loaded from a third party.
 */
const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The cookie's name and attributes: `__Host-` and Secure outside development (docs/console.md). */
export interface SessionCookie {
  name: string;
  secure: boolean;
}

/**
 * Secure (and so `__Host-`, which browsers accept only with Secure) when the service runs in
 * production or is reached over https; plain http during development gets an unprefixed cookie.
 */
export function sessionCookie(config: Pick<Config, 'nodeEnv' | 'publicBaseUrl'>): SessionCookie {
  const secure = config.nodeEnv === 'production' || (config.publicBaseUrl?.startsWith('https:') ?? false);
  return secure ? { name: '__Host-ap-console', secure } : { name: 'ap-console', secure };
}

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      return /^[A-Za-z0-9_-]{1,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

export function setSessionCookie(reply: FastifyReply, cookie: SessionCookie, value: string): FastifyReply {
  const attributes = `Path=/; HttpOnly; SameSite=Lax${cookie.secure ? '; Secure' : ''}`;
  return reply.header('set-cookie', `${cookie.name}=${value}; ${attributes}`);
}

export function clearSessionCookie(reply: FastifyReply, cookie: SessionCookie): FastifyReply {
  const attributes = `Path=/; HttpOnly; SameSite=Lax; Max-Age=0${cookie.secure ? '; Secure' : ''}`;
  return reply.header('set-cookie', `${cookie.name}=; ${attributes}`);
}

/** Sends a console document: its CSP, never cached, never framed, never sniffed. */
export function sendHtml(reply: FastifyReply, html: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONSOLE_CSP)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
    .send(html);
}

/** `host[:port]` of an Origin header, lowercase; null for `null` or anything unparseable. */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * A state-changing request must come from the console's own pages: the browser's Sec-Fetch-Site
 * and Origin say where it was sent from (refused when they name another site).
 */
export function checkSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (
    (site !== undefined && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && originHost(origin) !== (request.headers.host ?? '').toLowerCase())
  )
    throw new AppError('cross_origin_request', 'The console accepts forms from its own pages only.');
}

/** The same-origin check, then the session's anti-CSRF token (`_csrf` field or `x-csrf-token` header). */
export function checkCsrf(request: FastifyRequest, user: ConsoleUser): void {
  checkSameOrigin(request);
  const body = request.body as Record<string, unknown> | undefined;
  const given = body?._csrf ?? request.headers['x-csrf-token'];
  if (!csrfTokenMatches(user, given))
    throw new AppError('cross_origin_request', 'This form has expired: reload the page and send it again.');
}

const users = new WeakMap<FastifyRequest, ConsoleUser>();

export function setUserOf(request: FastifyRequest, user: ConsoleUser): void {
  users.set(request, user);
}

/** The signed-in user of a request of the console's signed-in area (its hook has made sure of one). */
export function userOf(request: FastifyRequest): ConsoleUser {
  const user = users.get(request);
  if (user === undefined) throw new Error('console route without its sign-in hook');
  return user;
}

/** A form field as text (absent: empty), at most `max` characters. */
export function formText(request: FastifyRequest, field: string, max = 10_000): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** A query-string parameter as text (absent: empty), at most `max` characters. */
export function queryText(request: FastifyRequest, name: string, max = 200): string {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** The origin sign-in links point at: PUBLIC_BASE_URL, else the request's own (development). */
export function consoleOrigin(config: Pick<Config, 'publicBaseUrl'>, request: FastifyRequest): string {
  return config.publicBaseUrl ?? `${request.protocol}://${request.headers.host ?? 'localhost'}`;
}

export function signInUrl(origin: string, token: string): string {
  return `${origin}/console/sign-in?token=${token}`;
}
