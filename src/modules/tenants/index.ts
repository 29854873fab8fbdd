/** Tenants and their API keys: operator functions (the CLI, the demo, test set-up). */
export { createApiKey, createTenant, listApiKeys, revokeTenantApiKey } from './tenants.service.js';
