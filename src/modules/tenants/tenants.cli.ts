import type { CliCommand } from '../../cli/command.js';
import { createApiKey, createTenant, listApiKeys, revokeApiKey } from './tenants.service.js';

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`--${name} is required`);
  return value;
}

export const tenantCommands: CliCommand[] = [
  {
    path: ['tenant', 'create'],
    summary: 'Create a tenant',
    options: { name: { type: 'string' } },
    run: async (ctx, { values }) => createTenant(ctx.db, ctx.clock, { name: required(values, 'name') }),
  },
  {
    path: ['key', 'create'],
    summary: 'Issue an API key for a tenant (shown once)',
    options: { tenant: { type: 'string' }, name: { type: 'string' } },
    run: async (ctx, { values }) => {
      const key = await createApiKey(ctx.db, ctx.clock, {
        tenantId: required(values, 'tenant'),
        name: typeof values.name === 'string' ? values.name : null,
      });
      return { keyId: key.keyId, apiKey: key.apiKey, tenantId: key.tenantId, name: key.name, createdAt: key.createdAt };
    },
  },
  {
    path: ['key', 'list'],
    summary: "List a tenant's API keys (prefixes only)",
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values }) => ({ keys: await listApiKeys(ctx.db, required(values, 'tenant')) }),
  },
  {
    path: ['key', 'revoke'],
    summary: 'Revoke an API key; it stops working within a second',
    positionals: 'KEY_ID',
    run: async (ctx, { positionals }) => {
      const keyId = positionals[0];
      if (!keyId) throw new Error('KEY_ID is required');
      return revokeApiKey(ctx.db, ctx.clock, keyId);
    },
  },
];
