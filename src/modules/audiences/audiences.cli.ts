import { Presets, SingleBar } from 'cli-progress';
import { positional, requiredText, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { importAudiencesCsv } from './audiences.import.js';
import { archiveAudience } from './audiences.service.js';
import { publishPageDrafts, versionWithGeneration } from './audiences.versions.js';

export const audiencesCommands: CliCommand[] = [
  {
    path: ['audience', 'import'],
    summary: 'Import a CSV of targets (columns email,name,company,domain,context) as audiences of a page',
    options: { tenant: { type: 'string' }, page: { type: 'string' } },
    positionals: 'FILE.csv',
    run: async (ctx, { values, positionals }) => {
      const file = positional(positionals, 'FILE.csv');
      const pageId = requiredText(values, 'page');
      const scope = await tenantScope(ctx, values);
      // On a terminal, a progress bar on stderr (stdout keeps the one summary, JSON with --json).
      const bar = process.stderr.isTTY
        ? new SingleBar(
            { format: 'importing {bar} {value}/{total} rows | {percentage}% | ETA {eta_formatted}', hideCursor: true },
            Presets.shades_classic,
          )
        : null;
      // Ctrl-C stops after the rows in flight: what is done stays done, the same command resumes.
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      try {
        return {
          ...(await importAudiencesCsv(scope, ctx.clock, pageId, file, {
            onStart: (rows) => bar?.start(rows, 0),
            onProgress: (done) => bar?.update(done),
            signal: controller.signal,
          })),
        };
      } finally {
        bar?.stop();
        process.off('SIGINT', stop);
      }
    },
  },
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
