import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { MigrationContext } from '../db/migrations/column-types.js';
import type { DB } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';

export interface CliContext {
  database: Database;
  db: Kysely<DB>;
  config: Config;
  clock: Clock;
  /** What migrations need from the service (the key that re-seals old webhook secrets). */
  migrations: MigrationContext;
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

/**
 * Thrown by a command that did its work but not all of it (an invitation made, its mail not sent):
 * `result` is printed as on success (with `error` beside it under --json), `message` goes to stderr,
 * and the exit code is `exitCode`.
 */
export class CommandIncomplete extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly result: Record<string, unknown>,
    readonly exitCode = 3,
  ) {
    super(message);
    this.name = 'CommandIncomplete';
  }
}
