import { TenantScope } from '../../db/tenant-scope.js';
import type { CliCommand, CliContext } from '../../cli/command.js';
import { archiveAudience } from './audiences.service.js';
import { publishPageDrafts } from './audiences.versions.js';

function scopeOf(ctx: CliContext, values: Record<string, unknown>): TenantScope {
  const tenant = values.tenant;
  if (typeof tenant !== 'string' || tenant === '') throw new Error('--tenant is required');
  return new TenantScope(ctx.db, ctx.database.engine, tenant);
}

function positional(positionals: string[], name: string): string {
  const value = positionals[0];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

export const audiencesCommands: CliCommand[] = [
  {
    path: ['audience', 'archive'],
    summary: 'Archive an audience (the API restores it with POST …/restore)',
    options: { tenant: { type: 'string' } },
    positionals: 'AUDIENCE_ID',
    run: async (ctx, { values, positionals }) => {
      const audienceId = positional(positionals, 'AUDIENCE_ID');
      await archiveAudience(scopeOf(ctx, values), ctx.clock, audienceId);
      return { audienceId, archived: true };
    },
  },
  {
    path: ['page', 'publish-drafts'],
    summary: 'Publish the draft version of every audience of a page',
    options: { tenant: { type: 'string' } },
    positionals: 'PAGE_ID',
    run: async (ctx, { values, positionals }) => ({
      published: await publishPageDrafts(scopeOf(ctx, values), ctx.clock, positional(positionals, 'PAGE_ID')),
    }),
  },
];
