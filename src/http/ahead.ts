import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answers a request on its own (true), or leaves it to the router (false) having written nothing. */
export type AheadResponder = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * Requests answered ahead of Fastify's router and hooks (docs/performance.md#page-hits-ahead-of-the-router):
 * the server's request listener asks each responder in turn, synchronously, and hands whatever
 * none answered to Fastify. Only for answers that need nothing of the request lifecycle (no
 * body, no authentication, no per-request log line): a page host's cached page is the one.
 */
export class AheadOfRouter {
  readonly #responders: AheadResponder[] = [];

  add(responder: AheadResponder): void {
    this.#responders.push(responder);
  }

  answered(request: IncomingMessage, response: ServerResponse): boolean {
    for (const responder of this.#responders) if (responder(request, response)) return true;
    return false;
  }
}
