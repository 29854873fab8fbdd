import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Where a link from a page goes, we say only which site it came from (keys in paths stay private). */
const REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** What every HTML answer on a page host (page, form errors, error page) carries, with its own CSP. */
export function htmlHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', REFERRER_POLICY);
}

/** The CSP source that allows exactly this inline script or style: `'sha256-…'`. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
