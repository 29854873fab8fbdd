import type { AheadOfRouter } from './ahead.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { TenantScope } from '../db/tenant-scope.js';
import type { Clock } from '../lib/clock.js';
import type { Principal } from '../auth/api-key-verifier.js';
import type { Registry } from '../metrics/metrics.js';
import type { Pager } from './pagination.js';

/** What route handlers may use besides the request: built once by buildApp. */
export interface AppContext {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly pager: Pager;
  readonly logger: Logger;
  /** This app's own metrics (request latencies, its page cache): docs/performance.md#metrics. */
  readonly metrics: Registry;
  /** What the server answers before the router does (page-cache hits): http/ahead.ts. */
  readonly ahead: AheadOfRouter;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    /** The authenticated key; set on every /v0 request. */
    principal: Principal;
    /** Tenant-scoped database access for the authenticated tenant. */
    scope: TenantScope;
    /**
     * The path the request log line shows, when it must not be the request's own: a page host
     * redacts person route keys (docs/privacy.md). Unset: the path as requested.
     */
    logPath?: string;
  }
}
