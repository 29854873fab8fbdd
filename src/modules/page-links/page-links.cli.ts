import { TenantScope } from '../../db/tenant-scope.js';
import type { CliCommand, CliContext } from '../module.js';
import * as links from './page-links.service.js';

function scopeOf(ctx: CliContext, values: Record<string, unknown>): TenantScope {
  const tenant = values.tenant;
  if (typeof tenant !== 'string' || tenant === '') throw new Error('--tenant is required');
  return new TenantScope(ctx.db, ctx.database.engine, tenant);
}

function text(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function positional(positionals: string[], name: string): string {
  const value = positionals[0];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** `link create|list|remove`: the same rules as the API. */
export const pageLinkCommands: CliCommand[] = [
  {
    path: ['link', 'create'],
    summary: 'Create a page link: PATH serving --audience (on --domain, or on every domain)',
    options: { tenant: { type: 'string' }, audience: { type: 'string' }, domain: { type: 'string' } },
    positionals: 'PATH',
    run: async (ctx, { values, positionals }) => {
      const audienceId = text(values, 'audience');
      if (audienceId === undefined) throw new Error('--audience is required');
      return links.createPageLink(scopeOf(ctx, values), ctx.clock, {
        path: positional(positionals, 'PATH'),
        tenantDomainId: text(values, 'domain') ?? null,
        target: { targetType: 'audience', audienceId },
      });
    },
  },
  {
    path: ['link', 'list'],
    summary: 'List live page links, newest first (--audience to filter, --limit up to 1000)',
    options: { tenant: { type: 'string' }, audience: { type: 'string' }, limit: { type: 'string' } },
    run: async (ctx, { values }) => {
      const limit = Math.min(1000, Math.max(1, Number(text(values, 'limit') ?? 100) || 100));
      const { items, totalCount } = await links.listPageLinks(scopeOf(ctx, values), text(values, 'audience') ?? null, {
        limit,
        after: null,
      });
      return { pageLinks: items.slice(0, limit), totalCount };
    },
  },
  {
    path: ['link', 'remove'],
    summary: 'Delete a page link (it stops serving at once)',
    options: { tenant: { type: 'string' } },
    positionals: 'PAGE_LINK_ID',
    run: async (ctx, { values, positionals }) => {
      const pageLinkId = positional(positionals, 'PAGE_LINK_ID');
      await links.deletePageLink(scopeOf(ctx, values), ctx.clock, pageLinkId);
      return { pageLinkId, removed: true };
    },
  },
];
