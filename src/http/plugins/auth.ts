import type { FastifyInstance } from 'fastify';
import { TenantScope } from '../../db/tenant-scope.js';
import type { VerifyApiKey } from '../../auth/api-key-verifier.js';
import { AppError } from '../errors.js';

/**
 * Authenticates every request of the enclosing scope (all of /v0) by its `x-api-key` and attaches
 * the tenant's scope: from here on, every query a handler makes is confined to that tenant.
 */
export function registerApiKeyAuth(app: FastifyInstance, verify: VerifyApiKey) {
  const { database } = app.ctx;
  app.decorateRequest('principal', null as never);
  app.decorateRequest('scope', null as never);
  app.addHook('onRequest', async (request) => {
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key.length === 0) {
      throw new AppError('missing_api_key', 'Send your API key in the x-api-key header.');
    }
    const principal = await verify(key);
    if (principal === null) throw new AppError('invalid_api_key', 'The API key is not valid or has been revoked.');
    request.principal = principal;
    request.scope = new TenantScope(database.kysely, database.engine, principal.tenantId);
  });
}
