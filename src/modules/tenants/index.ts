/** Tenants and their API keys: operator functions (the CLI, the demo, test set-up). */
export { createApiKey, createTenant } from './tenants.service.js';
