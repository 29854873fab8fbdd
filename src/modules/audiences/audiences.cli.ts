import { positional, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { archiveAudience } from './audiences.service.js';
import { publishPageDrafts, versionWithGeneration } from './audiences.versions.js';

export const audiencesCommands: CliCommand[] = [
  {
    path: ['audience', 'archive'],
    summary: 'Archive an audience (the API restores it with POST …/restore)',
    options: { tenant: { type: 'string' } },
    positionals: 'AUDIENCE_ID',
    run: async (ctx, { values, positionals }) => {
      const audienceId = positional(positionals, 'AUDIENCE_ID');
      await archiveAudience(await tenantScope(ctx, values), ctx.clock, audienceId);
      return { audienceId, archived: true };
    },
  },
  {
    path: ['page', 'publish-drafts'],
    summary: 'Publish the draft version of every audience of a page',
    options: { tenant: { type: 'string' } },
    positionals: 'PAGE_ID',
    run: async (ctx, { values, positionals }) => ({
      published: await publishPageDrafts(await tenantScope(ctx, values), ctx.clock, positional(positionals, 'PAGE_ID')),
    }),
  },
  {
    path: ['version', 'show'],
    summary: 'Show a version: its status, and which generator and model made it at what cost',
    options: { tenant: { type: 'string' } },
    positionals: 'VERSION_ID',
    run: async (ctx, { values, positionals }) =>
      versionWithGeneration(await tenantScope(ctx, values), positional(positionals, 'VERSION_ID')),
  },
];
