import type { GenerationInput } from '../../src/modules/audiences/audiences.generator.js';

const BRIEF = `Pages per account, written from **your** knowledge.

Priced by live pages, not seats.

## What {{company}} gets
- **A page per account**: every prospect gets their own page.
- Reuse — answers and proof points come from your topics.

## How buying works
1. **Try it**: 14 days free.
2. **Go live**: onboarding included.

## Security
Single sign-on on every plan.

- audit logs
- SOC 2 report`;

/** A generation input for a person's own pricing page (Sam Lee at Globex), with overrides. */
export function generationInput(over: Partial<GenerationInput> = {}): GenerationInput {
  return {
    version: {
      versionId: 'v',
      versionNumber: 2,
      isNewPageAgent: false,
      supplementaryContext: 'Globex opens three regional teams.',
    },
    page: {
      pageId: 'page_1',
      name: 'Pricing',
      title: 'Pricing that fits {{company}}',
      pageContext: BRIEF,
      pageType: 'inbound',
      brandId: 'brand',
      headerActionId: 'a1',
      actions: [
        {
          actionId: 'a1',
          purpose: 'Book time with {{person}}',
          buttonTitle: 'Book a demo',
          actionType: 'calendar',
          url: 'https://x.example/book',
        },
      ],
      actionCardWidgets: [],
      footerLinks: [],
      scripts: [],
    },
    audience: {
      audienceId: 'aud_1',
      effectiveName: 'Globex expansion',
      personId: 'p1',
      personRouteKey: 'sam',
      actionFormIdOverride: null,
      actionFormInstructionsOverride: null,
      actionUrlOverride: null,
    },
    person: {
      personId: 'p1',
      name: 'Sam Lee',
      emailDomain: 'globex.example',
      accountDomain: 'globex.example',
      accountName: 'Globex',
    },
    activity: [],
    knowledge: [
      {
        title: 'Why us',
        isDefault: true,
        entries: [
          { type: 'quote', content: 'We stopped sending one deck to everyone. — Dana Ortiz, VP Sales' },
          { type: 'question', content: 'Does it work with our CRM?' },
          { type: 'answer', content: 'Yes, both ways.' },
          { type: 'note', content: 'internal only' },
        ],
      },
    ],
    effectiveMetadata: { title: 'Northwind pricing' },
    ...over,
  };
}
