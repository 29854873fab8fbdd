import type { FastifyReply, FastifyRequest } from 'fastify';
import { renderToStaticMarkup } from 'preact-render-to-string';
import { cspHash, htmlHeaders } from './site.headers.js';

/**
 * The runtime's own small HTML pages for what goes wrong (404, 405, 410, 429, 500): a visitor
 * meets a page, never JSON or a stack trace. No tenant content and no script, so each status's
 * page is the same bytes for everyone: rendered once, then reused.
 */

/** The error pages' own style, inline (they are also shown where the stylesheet is not served). */
const ERROR_STYLE =
  'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#111827;line-height:1.6}' +
  'main{max-width:36rem;margin:0 auto;padding:4rem 1.25rem}p.code{font-size:.875rem;font-weight:700;color:#4b5563;margin:0}' +
  'h1{font-size:2rem;line-height:1.2;margin:.25rem 0 .75rem}';

/** The policy of the runtime's own small pages (errors): no script, only their own style. */
const ERROR_PAGE_CSP = `default-src 'none'; style-src ${cspHash(ERROR_STYLE)}; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

const MESSAGES: Record<number | string, { title: string; text: string }> = {
  404: { title: 'Page not found', text: 'There is no page at this address. Check the link you were given.' },
  405: { title: 'Not allowed', text: 'This address only serves pages.' },
  410: { title: 'Page no longer available', text: 'This page has been taken down by its owner.' },
  429: { title: 'Too many requests', text: 'Please wait a moment and try again.' },
  500: { title: 'Something went wrong', text: 'Please try again in a moment.' },
  'preview-invalid': {
    title: 'Preview link not valid',
    text: 'This preview link is incomplete or was changed. Ask for a new preview link.',
  },
  'preview-expired': {
    title: 'Preview link expired',
    text: 'This preview link has expired. Ask for a new preview link.',
  },
};

/** The variants of a status with their own words (a preview link that was changed, or expired). */
export type ErrorPageKind = 'preview-invalid' | 'preview-expired';

/** The runtime's own small page for a visitor (no tenant content, no script). */
function renderErrorPage(status: number, kind?: ErrorPageKind): string {
  const message =
    (kind === undefined ? undefined : MESSAGES[kind]) ?? MESSAGES[status] ?? MESSAGES[status >= 500 ? 500 : 404]!;
  return (
    '<!doctype html>' +
    renderToStaticMarkup(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title>{message.title}</title>
          <style dangerouslySetInnerHTML={{ __html: ERROR_STYLE }} />
        </head>
        <body>
          <main>
            <p class="code">{status}</p>
            <h1>{message.title}</h1>
            <p>{message.text}</p>
          </main>
        </body>
      </html>,
    )
  );
}

const rendered = new Map<string, string>();

/** Answers with the error page of `status` (in its `kind`'s words); nobody may keep it (`no-store`). */
export function sendErrorPage(reply: FastifyReply, status: number, kind?: ErrorPageKind): FastifyReply {
  const key = `${status} ${kind ?? ''}`;
  let html = rendered.get(key);
  if (html === undefined) rendered.set(key, (html = renderErrorPage(status, kind)));
  return htmlHeaders(reply.code(status).header('cache-control', 'no-store'), ERROR_PAGE_CSP).send(html);
}

/** Errors on page hosts as the small HTML pages: a bad URL is "no page here", never a stack trace. */
export function htmlErrors(
  error: { statusCode?: number; status?: number },
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const status = error.status ?? error.statusCode ?? 500;
  if ((error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE') {
    // The visitor left while an answer was streaming: nothing failed, and there is nobody to answer.
    request.log.debug('the visitor left before the response ended');
    return reply;
  }
  if (status >= 500) {
    request.log.error({ err: error }, 'page request failed');
    return sendErrorPage(reply, 500);
  }
  return sendErrorPage(reply, status === 405 || status === 410 || status === 429 ? status : 404);
}

const API_PATHS = /^\/(v0|docs|openapi\.json|files|healthz|readyz)(\/|$|\?)/;

/**
 * For the API host's not-found handler: a browser asking for a path the API does not have (an
 * unknown or removed host, a typo) gets the small HTML 404 page instead of problem+json. Returns
 * undefined when the request is not such a request.
 */
export function browserNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const accept = request.headers.accept ?? '';
  const wantsHtml = (request.method === 'GET' || request.method === 'HEAD') && accept.includes('text/html');
  if (!wantsHtml || API_PATHS.test(request.url)) return undefined;
  return sendErrorPage(reply, 404);
}
