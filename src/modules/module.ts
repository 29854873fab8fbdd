import type { TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import type { TenantScope } from '../db/tenant-scope.js';
import type { Clock } from '../lib/clock.js';

/** What a resource module contributes to the service. Modules are listed in modules/index.ts. */
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
  workers?: (ctx: WorkerContext) => BackgroundWorker[];
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

export interface WorkerContext {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Wakes the workers listening on `channel` (e.g. after committing events). */
  notify: (channel: string) => void;
}

export interface BackgroundWorker {
  name: string;
  /** Channels (see AppContext.notify) that should wake this worker at once. */
  channels?: string[];
  start(): void;
  wake(): void;
  /** Finishes the current unit of work and stops. */
  stop(): Promise<void>;
}

export interface CliContext {
  database: Database;
  db: Kysely<DB>;
  config: Config;
  clock: Clock;
}

export interface CliCommand {
  /** e.g. ['key', 'create'] for `audience-pages key create`. */
  path: string[];
  summary: string;
  /** Options, as node:util parseArgs takes them. */
  options?: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
  /** Usage of positionals, e.g. 'KEY_ID'. */
  positionals?: string;
  run(
    ctx: CliContext,
    args: { values: Record<string, unknown>; positionals: string[] },
  ): Promise<Record<string, unknown>>;
}
