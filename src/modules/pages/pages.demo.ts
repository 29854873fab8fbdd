import type { DemoContext } from '../module.js';
import { createPage, type NewPage } from './pages.service.js';

const BRAND = 'brand_northwind';

/** A page for each type and state a tenant meets in practice, one of them archived, one deleted. */
function demoPages(): NewPage[] {
  const footer = [
    {
      id: 'company',
      title: 'Company',
      links: [
        { id: 'about', text: 'About us', url: 'https://northwind.example/about' },
        { id: 'privacy', text: 'Privacy', url: 'https://northwind.example/privacy' },
      ],
    },
  ];
  const demoAction = {
    purpose: 'Book a 30-minute walkthrough with a solutions engineer',
    buttonTitle: 'Book a demo',
    actionType: 'calendar',
    url: 'https://northwind.example/book',
  };
  return [
    {
      name: 'Inbound: pricing page visitors',
      title: 'Pricing that fits {{company}}',
      pageContext: 'Visitors who viewed pricing twice in a week. Emphasize ROI and the free trial.',
      pageType: 'inbound',
      status: 'published',
      brandId: BRAND,
      actions: [
        demoAction,
        {
          purpose: 'Start a trial',
          buttonTitle: 'Try it free',
          actionType: 'link',
          url: 'https://northwind.example/trial',
        },
      ],
      headerActionIndex: 0,
      actionCardWidgets: [
        {
          type: 'logo_wall',
          title: 'Trusted by teams like yours',
          logos: [
            {
              image: { altText: 'Acme', url: 'https://cdn.northwind.example/logos/acme.png', fileId: '', assetId: '' },
            },
          ],
        },
      ],
      footerLinks: footer,
      scripts: [
        { name: 'Analytics', description: 'Page analytics', content: 'window.analytics?.page();', enabled: true },
      ],
      metadata: {
        title: 'Northwind pricing',
        description: 'Plans for every team',
        keywords: ['pricing', 'plans'],
        robots: ['index', 'follow'],
      },
    },
    {
      name: 'Outbound: Q4 enterprise sequence',
      title: 'A plan for {{company}}',
      pageContext: 'Cold outbound to VP Sales at companies over 500 employees.',
      pageType: 'outbound',
      status: 'published',
      brandId: BRAND,
      actions: [demoAction],
      headerActionIndex: 0,
      footerLinks: footer,
      metadata: { title: 'Northwind for enterprise', robots: ['noindex'] },
    },
    {
      name: 'Call follow-up: discovery recap',
      title: 'Recap of our call',
      pageContext: 'Summary of the discovery call, next steps and the mutual action plan.',
      pageType: 'call_followup',
      status: 'draft',
      brandId: BRAND,
      actions: [
        {
          purpose: 'Confirm next steps',
          buttonTitle: 'Confirm',
          actionType: 'form',
          url: 'https://northwind.example/confirm',
        },
      ],
    },
    {
      name: 'Sales deck: platform overview',
      title: 'Northwind platform overview',
      pageContext: 'Interactive deck covering platform, integrations and security.',
      pageType: 'sales_deck',
      status: 'published',
      brandId: BRAND,
      metadata: {
        title: 'Platform overview',
        ogTitle: 'Northwind platform',
        ogImageUrl: 'https://cdn.northwind.example/og/platform.png',
      },
    },
    {
      name: 'Custom: partner co-marketing',
      title: 'Northwind × Partner',
      pageContext: 'Co-branded page for the partner webinar audience.',
      pageType: 'custom',
      status: 'draft',
      brandId: 'brand_partner',
    },
    {
      name: 'Inbound: 2025 webinar (archived)',
      title: 'Webinar replay',
      pageContext: 'Replay of last year’s webinar; kept for reference.',
      pageType: 'inbound',
      status: 'archived',
      brandId: BRAND,
    },
    {
      name: 'Outbound: abandoned test page',
      title: 'Test',
      pageContext: 'Deleted; invisible through the API.',
      pageType: 'outbound',
      status: 'draft',
      brandId: BRAND,
      deleted: true,
    },
  ];
}

export async function pagesDemo(ctx: DemoContext) {
  const pageIds: string[] = [];
  for (const page of demoPages()) {
    const id = await createPage(ctx.scope, ctx.clock, page);
    if (!page.deleted) pageIds.push(id);
  }
  return { pageIds };
}
