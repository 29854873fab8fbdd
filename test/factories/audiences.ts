import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { createAudience, type NewAudience } from '../../src/modules/audiences/index.js';
import { makePage } from './pages.js';

/** An audience (with its first version generated and published) on `pageId`, or on a new page. */
export async function makeAudience(
  scope: TenantScope,
  clock: Clock,
  overrides: Partial<NewAudience> = {},
): Promise<{ pageId: string; audienceId: string; versionId: string }> {
  const pageId = overrides.pageId ?? (await makePage(scope, clock));
  const { audienceId, versionId } = await createAudience(scope, clock, {
    pageId,
    computedName: 'Acme Corp · VP Sales',
    personRouteKey: 'jane-acme',
    ...overrides,
  });
  return { pageId, audienceId, versionId };
}
