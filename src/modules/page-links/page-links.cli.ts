import { optionalText, positional, requiredText, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import * as links from './page-links.service.js';

/** `link create|list|remove`: the same rules as the API. */
export const pageLinkCommands: CliCommand[] = [
  {
    path: ['link', 'create'],
    summary: 'Create a page link: PATH serving --audience (on --domain, or on every domain)',
    options: { tenant: { type: 'string' }, audience: { type: 'string' }, domain: { type: 'string' } },
    positionals: 'PATH',
    run: async (ctx, { values, positionals }) => {
      const audienceId = requiredText(values, 'audience');
      return links.createPageLink(await tenantScope(ctx, values), ctx.clock, {
        path: positional(positionals, 'PATH'),
        tenantDomainId: optionalText(values, 'domain') ?? null,
        target: { targetType: 'audience', audienceId },
      });
    },
  },
  {
    path: ['link', 'list'],
    summary: 'List live page links, newest first (--audience to filter, --limit up to 1000)',
    options: { tenant: { type: 'string' }, audience: { type: 'string' }, limit: { type: 'string' } },
    run: async (ctx, { values }) => {
      const limit = Math.min(1000, Math.max(1, Number(optionalText(values, 'limit') ?? 100) || 100));
      const { items, totalCount } = await links.listPageLinks(
        await tenantScope(ctx, values),
        optionalText(values, 'audience') ?? null,
        {
          limit,
          after: null,
        },
      );
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
      await links.deletePageLink(await tenantScope(ctx, values), ctx.clock, pageLinkId);
      return { pageLinkId, removed: true };
    },
  },
];
