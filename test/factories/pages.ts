import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { createPage, type NewPage } from '../../src/modules/pages/pages.service.js';

/** A valid page with overrides; returns its id. */
export function makePage(scope: TenantScope, clock: Clock, overrides: Partial<NewPage> = {}): Promise<string> {
  return createPage(scope, clock, {
    name: 'Welcome page',
    title: 'Welcome',
    pageContext: 'Context for the page generator.',
    pageType: 'inbound',
    status: 'draft',
    brandId: 'brand_1',
    actions: [
      { purpose: 'Book', buttonTitle: 'Book a demo', actionType: 'calendar', url: 'https://example.com/book' },
      { purpose: 'Read', buttonTitle: 'Read more', actionType: 'link', url: 'https://example.com/read' },
    ],
    headerActionIndex: 0,
    metadata: { title: 'Welcome', ogImageUrl: 'https://cdn.example.com/og.png' },
    ...overrides,
  });
}
