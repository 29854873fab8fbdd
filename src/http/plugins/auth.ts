import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Database } from '../../db/connect.js';
import type { Principal, VerifyApiKey } from '../../auth/api-key-verifier.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../errors.js';
import { clientKey } from '../client-address.js';

/** What the auth hook needs of the key verifier (src/auth/api-key-verifier.ts). */
export interface KeyAuthenticator {
  /** A recent answer for this key, without waiting; undefined when it must be looked up. */
  cached(apiKey: string): Principal | null | undefined;
  verify: VerifyApiKey;
  /** Whether the key was valid when last seen (an address over its failure limit may still use it). */
  wasValid(apiKey: string): boolean;
}

/** What the auth hook needs of the failed-authentication limit per client address. */
export interface FailureLimit {
  readonly enabled: boolean;
  /** Seconds until the address may try an unknown key again; 0 when it may now. */
  retryAfter(address: string): number;
  fail(address: string): void;
}

/** Authenticates a request: calls `done()` with the tenant's scope attached, or `done(error)`. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * Authenticates every request of the enclosing scope (all of /v0) by its `x-api-key` and attaches
 * the tenant's scope: from here on, every query a handler makes is confined to that tenant.
 */
export function registerApiKeyAuth(app: FastifyInstance, authenticate: Authenticate) {
  app.decorateRequest('principal', null as never);
  app.decorateRequest('scope', null as never);
  app.addHook('onRequest', authenticate);
}

/**
 * The authentication step, also run on its own for /v0 requests the router cannot route (a
 * malformed URL), which get no hooks: whatever the URL, a request without a valid key learns
 * nothing but 401. A key seen in the last second is answered from memory (no hash, no query, no
 * promise); an address that keeps presenting invalid keys gets 429 instead of more look-ups
 * (docs/api.md).
 */
export function apiKeyAuthenticator(
  database: Database,
  auth: { verifier: KeyAuthenticator; failures: FailureLimit },
): Authenticate {
  const { verifier, failures } = auth;
  // One scope per principal (principals are shared by every request of a cached key).
  const scopes = new WeakMap<Principal, TenantScope>();
  const accept = (request: FastifyRequest, principal: Principal) => {
    let scope = scopes.get(principal);
    if (scope === undefined) {
      scope = TenantScope.of(database, principal.tenantId);
      scopes.set(principal, scope);
    }
    request.principal = principal;
    request.scope = scope;
  };
  const refuse = (request: FastifyRequest) => {
    failures.fail(clientKey(request.ip));
    return new AppError('invalid_api_key', 'The API key is not valid or has been revoked.');
  };

  return (request, reply, done) => {
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key.length === 0) {
      done(new AppError('missing_api_key', 'Send your API key in the x-api-key header.'));
      return;
    }
    const cached = verifier.cached(key);
    if (cached) {
      accept(request, cached);
      done();
      return;
    }
    if (failures.enabled && !verifier.wasValid(key)) {
      const retryAfter = failures.retryAfter(clientKey(request.ip));
      if (retryAfter > 0) {
        reply.header('retry-after', String(retryAfter));
        done(
          new AppError(
            'rate_limited',
            `Too many requests with invalid API keys from this address; retry after ${retryAfter} s.`,
          ),
        );
        return;
      }
    }
    if (cached === null) {
      done(refuse(request));
      return;
    }
    verifier.verify(key).then((principal) => {
      if (principal === null) done(refuse(request));
      else {
        accept(request, principal);
        done();
      }
    }, done);
  };
}
