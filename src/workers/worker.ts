import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { Clock } from '../lib/clock.js';

/** What a background worker is given by the process that runs it. */
export interface WorkerContext {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
}

export interface BackgroundWorker {
  name: string;
  /** Channels that wake this worker at once (sent after a commit: TenantScope.afterCommit). */
  channels?: string[];
  start(): void;
  wake(): void;
  /** Finishes the current unit of work and stops. */
  stop(): Promise<void>;
}

/** Makes the workers of one part of the service (a resource module, housekeeping). */
export type WorkerFactory = (ctx: WorkerContext) => BackgroundWorker[];
