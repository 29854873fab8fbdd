import type { TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { CliCommand } from '../cli/command.js';
import type { Config } from '../config.js';
import type { TenantScope } from '../db/tenant-scope.js';
import type { Clock } from '../lib/clock.js';
import type { WorkerFactory } from '../workers/worker.js';

/**
 * What a resource module contributes to the service, declared in its `<resource>.module.ts` and
 * listed in the registry (modules/index.ts), which only the composition root reads.
 */
export interface ServiceModule {
  name: string;
  /** Named shapes (with `$id`) that responses refer to with Type.Ref; they become OpenAPI components. */
  schemas?: TSchema[];
  /** Routes under /v0, authenticated by API key and scoped to its tenant. */
  routes?: FastifyPluginAsync;
  /** Routes outside /v0 that authenticate otherwise (e.g. signed URLs). */
  publicRoutes?: FastifyPluginAsync;
  /** Adds this module's part of the `demo` data set for a new tenant; returns the ids it made. */
  demo?: (ctx: DemoContext) => Promise<Record<string, unknown>>;
  /** Background workers this module runs in the server process. */
  workers?: WorkerFactory;
  /** Operator CLI commands. */
  commands?: CliCommand[];
}

export interface DemoContext {
  scope: TenantScope;
  clock: Clock;
  config: Config;
  /** What earlier modules created (e.g. page ids), keyed by module name. */
  created: Record<string, Record<string, unknown>>;
}
