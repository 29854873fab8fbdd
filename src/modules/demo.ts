import type { CliCommand } from '../cli/command.js';
import { TenantScope } from '../db/tenant-scope.js';
import { modules } from './index.js';
import { createApiKey, createTenant } from './tenants/index.js';

/** `audience-pages demo`: a new tenant with a key, and every module's part of a realistic data set. */
export const demoCommand: CliCommand = {
  path: ['demo'],
  summary: 'Create a tenant with an API key and a realistic data set for every resource',
  options: { name: { type: 'string' } },
  run: async (ctx, { values }) => {
    const tenant = await createTenant(ctx.db, ctx.clock, {
      name: typeof values.name === 'string' ? values.name : 'Northwind Demo',
    });
    const key = await createApiKey(ctx.db, ctx.clock, { tenantId: tenant.tenantId, name: 'demo' });
    const scope = TenantScope.of(ctx.database, tenant.tenantId);
    // Later modules read what earlier ones made; the tenant itself comes first (e.g. its name for host names).
    const created: Record<string, Record<string, unknown>> = { tenants: { name: tenant.name } };
    for (const module of modules) {
      if (module.demo)
        created[module.name] = await module.demo({ scope, clock: ctx.clock, config: ctx.config, created });
    }
    return { tenantId: tenant.tenantId, apiKey: key.apiKey, keyId: key.keyId, ...created };
  },
};
