import { pino } from 'pino';
import type { Database } from '../../src/db/connect.js';
import { versionGeneration } from '../../src/modules/audiences/audiences.generation-worker.js';
import { publishPageDrafts } from '../../src/modules/audiences/audiences.versions.js';
import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { seedAudience, type NewAudience } from '../../src/modules/audiences/index.js';
import type { Tenant, TestApp } from '../harness.js';
import { makePage } from './pages.js';

/** An audience (with its first version generated and published) on `pageId`, or on a new page. */
export async function makeAudience(
  scope: TenantScope,
  clock: Clock,
  overrides: Partial<NewAudience> = {},
): Promise<{ pageId: string; audienceId: string; versionId: string }> {
  const pageId = overrides.pageId ?? (await makePage(scope, clock));
  const { audienceId, versionId } = await seedAudience(scope, clock, {
    pageId,
    computedName: 'Acme Corp · VP Sales',
    personRouteKey: 'jane-acme',
    ...overrides,
  });
  return { pageId, audienceId, versionId };
}

/** Runs the generation worker's steps until nothing is runnable (what the worker does in the background). */
export async function drainGeneration(database: Database, clock: Clock): Promise<void> {
  await versionGeneration({ database, clock, logger: pino({ level: 'silent' }) }).drain();
}

export { publishPageDrafts };

/**
 * A new version of the audience through the API (endpoint 6), generated and published as the
 * worker would: what a tenant's "regenerate this audience" does end to end.
 */
export async function publishNewVersion(t: TestApp, tenant: Tenant, pageId: string, audienceId: string) {
  const created = await t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
    payload: {},
  });
  if (created.statusCode !== 201) throw new Error(`new version: ${created.statusCode} ${created.body}`);
  await drainGeneration(t.database, t.clock);
}
