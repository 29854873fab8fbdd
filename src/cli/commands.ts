import { migrateToLatest } from '../db/migrate.js';
import type { CliCommand } from './command.js';

/** The commands that belong to no resource. */
export const coreCommands: CliCommand[] = [
  {
    path: ['migrate'],
    summary: 'Apply pending database migrations',
    run: async (ctx) => ({ applied: await migrateToLatest(ctx.database, ctx.migrations) }),
  },
];
