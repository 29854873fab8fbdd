import type { DemoContext } from '../module.js';
import { createPage, type NewPage } from './pages.service.js';

const BRAND = 'brand_northwind';

/**
 * Briefs are the pages' material, written the way the built-in writer lays them out (a first
 * paragraph, then a section per heading; lists become value points or steps) and a model rewrites
 * them for each reader. `{{company}}` and `{{person}}` are filled per audience.
 */
const PRICING_BRIEF = [
  'One plan per team, priced by the pages you keep live — not by seats. Every plan starts with a 14-day free trial.',
  '## What {{company}} gets',
  '- **A page per account**: every prospect gets a page that speaks to their team, their goals and their stage.',
  '- **Your knowledge, reused**: answers, proof points and pricing notes come from your own topics.',
  '- **Visits you can act on**: see who read what, for how long, and which page led to a meeting.',
  '## How buying works',
  '1. **Try it**: 14 days with every feature, no credit card.',
  '2. **Pick a plan**: by the number of live audiences; change it any month.',
  '3. **Go live**: annual plans include onboarding with a solutions engineer.',
].join('\n\n');

const ENTERPRISE_BRIEF = [
  'A plan for sales teams of 500 people and more: one brand, many teams, every page measured.',
  '## Built for large teams',
  '- **Regional workspaces**: each team keeps its own pages and reports.',
  '- **Security reviewed**: SOC 2 Type II, single sign-on and audit logs.',
  '- **Your CRM, in sync**: Salesforce and HubSpot, both ways.',
].join('\n\n');

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
      pageContext: PRICING_BRIEF,
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
      pageContext: ENTERPRISE_BRIEF,
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
      pageContext: [
        'Thank you for the time today, {{person}}. Here is what we heard and what happens next.',
        '## Next steps',
        '1. **Technical review**: your IT team checks single sign-on and the CRM sync.',
        '2. **Pilot**: one campaign for {{company}}, live within two weeks.',
        '3. **Decision**: we review the pilot together and agree on the plan.',
      ].join('\n\n'),
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
      pageContext: [
        'One platform for personal pages: written from your knowledge, measured on every visit.',
        '## The platform',
        '- **Pages**: a page per account, person or segment, on your own domain.',
        '- **Knowledge**: topics hold your answers, proof points and pricing notes.',
        '- **Insights**: engaged time, scroll depth and conversions per page and per person.',
        '## Integrations',
        'Salesforce and HubSpot sync both ways. Webhooks tell your other systems when a page goes live or a form comes in.',
      ].join('\n\n'),
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
      pageContext: 'A page for everyone who joined our partner webinar, with the recording and the offer we discussed.',
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
