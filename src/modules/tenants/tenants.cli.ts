import { positional, requiredText } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { createApiKey, createTenant, listApiKeys, revokeApiKey } from './tenants.service.js';

export const tenantCommands: CliCommand[] = [
  {
    path: ['tenant', 'create'],
    summary: 'Create a tenant',
    options: { name: { type: 'string' } },
    run: async (ctx, { values }) => createTenant(ctx.db, ctx.clock, { name: requiredText(values, 'name') }),
  },
  {
    path: ['key', 'create'],
    summary: 'Issue an API key for a tenant (shown once)',
    options: { tenant: { type: 'string' }, name: { type: 'string' } },
    run: async (ctx, { values }) => {
      const key = await createApiKey(ctx.db, ctx.clock, {
        tenantId: requiredText(values, 'tenant'),
        name: typeof values.name === 'string' ? values.name : null,
      });
      return { keyId: key.keyId, apiKey: key.apiKey, tenantId: key.tenantId, name: key.name, createdAt: key.createdAt };
    },
  },
  {
    path: ['key', 'list'],
    summary: "List a tenant's API keys (prefixes only)",
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values }) => ({ keys: await listApiKeys(ctx.db, requiredText(values, 'tenant')) }),
  },
  {
    path: ['key', 'revoke'],
    summary: 'Revoke an API key; it stops working within a second',
    positionals: 'KEY_ID',
    run: async (ctx, { positionals }) => {
      return revokeApiKey(ctx.db, ctx.clock, positional(positionals, 'KEY_ID'));
    },
  },
];
