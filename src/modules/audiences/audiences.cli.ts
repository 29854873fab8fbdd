import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { Presets, SingleBar } from 'cli-progress';
import { optionalText, positional, requiredText, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { validationFailed } from '../../http/errors.js';
import { previewUrl } from '../site/index.js';
import { importAudiencesCsv } from './audiences.import.js';
import { AudienceCreateBody } from './audiences.schemas.js';
import { archiveAudience, createAudience, type AudienceInput } from './audiences.service.js';
import {
  previewableVersion,
  publishOrRollBack,
  publishPageDrafts,
  versionPath,
  versionWithGeneration,
} from './audiences.versions.js';

/**
 * The body of `audience create`: `--file body.json` (the body of POST …/audiences), with the
 * flags on top; checked against the same schema as the API.
 */
async function audienceInput(values: Record<string, unknown>): Promise<AudienceInput> {
  const file = optionalText(values, 'file');
  const body: Record<string, unknown> = file === undefined ? {} : JSON.parse(await readFile(file, 'utf8'));
  const flags: Record<string, string | undefined> = {
    personId: optionalText(values, 'person'),
    accountId: optionalText(values, 'account'),
    customName: optionalText(values, 'name'),
    supplementaryContext: optionalText(values, 'context'),
    personRouteKey: optionalText(values, 'route-key'),
  };
  for (const [key, value] of Object.entries(flags)) if (value !== undefined) body[key] = value;
  const error = Value.Errors(AudienceCreateBody, body).First();
  if (error !== undefined) throw validationFailed(error.path || '/', error.message.toLowerCase());
  const { idempotencyKey: _ignored, ...input } = body as AudienceCreateBody;
  return input;
}

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
    path: ['audience', 'create'],
    summary:
      'Create an audience on a page (as POST …/audiences): --person ID, --account ID or neither (--name), --context, --route-key, --file body.json',
    options: {
      tenant: { type: 'string' },
      page: { type: 'string' },
      person: { type: 'string' },
      account: { type: 'string' },
      name: { type: 'string' },
      context: { type: 'string' },
      'route-key': { type: 'string' },
      file: { type: 'string' },
    },
    run: async (ctx, { values }) => {
      const scope = await tenantScope(ctx, values);
      const input = await audienceInput(values);
      return createAudience(scope, ctx.clock, requiredText(values, 'page'), input);
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
    summary: 'Show a version: its status, its content, and which generator and model made it at what cost',
    options: { tenant: { type: 'string' } },
    positionals: 'VERSION_ID',
    run: async (ctx, { values, positionals }) =>
      versionWithGeneration(await tenantScope(ctx, values), positional(positionals, 'VERSION_ID')),
  },
  {
    path: ['version', 'publish'],
    summary: 'Publish a draft version, or roll back to an archived one (as POST …/versions/{id}/publish)',
    options: { tenant: { type: 'string' } },
    positionals: 'VERSION_ID',
    run: async (ctx, { values, positionals }) => {
      const scope = await tenantScope(ctx, values);
      const { pageId, audienceId, versionId } = await versionPath(scope, positional(positionals, 'VERSION_ID'));
      const { version, created } = await publishOrRollBack(scope, ctx.clock, pageId, audienceId, versionId);
      return { ...version, rolledBackFrom: created ? versionId : null };
    },
  },
  {
    path: ['version', 'preview'],
    summary: 'A signed, expiring URL that shows a version as a visitor would see it',
    options: { tenant: { type: 'string' } },
    positionals: 'VERSION_ID',
    run: async (ctx, { values, positionals }) => {
      const scope = await tenantScope(ctx, values);
      const { pageId, audienceId, versionId } = await versionPath(scope, positional(positionals, 'VERSION_ID'));
      await previewableVersion(scope, pageId, audienceId, versionId);
      return previewUrl(ctx, `http://localhost:${ctx.config.port}`, scope.tenantId, versionId);
    },
  },
];
