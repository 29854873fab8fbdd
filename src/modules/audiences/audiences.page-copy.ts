import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { strict } from '../../http/schemas.js';
import type { GeneratedArtifact, GenerationInput } from './audiences.generator.js';

/**
 * The v2 page (`application/vnd.audience-page.v2+json`): the words a generator writes (`PageCopy`,
 * below), stored beside the structure the tenant owns (actions and their URLs, widgets, footer,
 * scripts, metadata), which is carried exactly as the v1 artifact carried it. A generator writes
 * words only: never a URL, a script or markup. The same TypeBox schema validates what a model
 * answers and, through llm/strict-schema.ts, is the JSON schema the model is asked to follow.
 */
const PAGE_V2 = 'application/vnd.audience-page.v2+json';

const MARKDOWN =
  'Plain text or a small Markdown subset: paragraphs, **bold**, *italic*, lists. No links, images or HTML.';
const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });
const Heading = Text(120, "The section's heading; '' for none.");

const Item = Type.Object({ title: Text(80, 'A few words.'), text: Text(400, 'One or two sentences.') }, strict);

const TextSection = Type.Object(
  { kind: Type.Literal('text'), heading: Heading, body: Text(3000, MARKDOWN) },
  { ...strict, description: 'Prose.' },
);
const BenefitsSection = Type.Object(
  {
    kind: Type.Literal('benefits'),
    heading: Heading,
    intro: Text(400, "A sentence before the points; '' for none."),
    items: Type.Array(Item, { maxItems: 6 }),
  },
  { ...strict, description: 'Benefits or value points.' },
);
const StepsSection = Type.Object(
  {
    kind: Type.Literal('steps'),
    heading: Heading,
    intro: Text(400, "A sentence before the steps; '' for none."),
    items: Type.Array(Item, { maxItems: 6 }),
  },
  { ...strict, description: 'Steps, in order.' },
);
const ProofSection = Type.Object(
  {
    kind: Type.Literal('proof'),
    heading: Heading,
    items: Type.Array(
      Type.Object(
        {
          quote: Text(400, 'Copied word for word from the facts given; never written anew.'),
          attribution: Text(120, "Who said it, as the facts give it; '' for none."),
        },
        strict,
      ),
      { maxItems: 3 },
    ),
  },
  { ...strict, description: "Quotes or proof points, taken word for word from the tenant's material." },
);
const FaqSection = Type.Object(
  {
    kind: Type.Literal('faq'),
    heading: Heading,
    items: Type.Array(Type.Object({ question: Text(200, 'The question.'), answer: Text(1200, MARKDOWN) }, strict), {
      maxItems: 8,
    }),
  },
  { ...strict, description: 'Questions and answers.' },
);

export const PageSection = Type.Union([TextSection, BenefitsSection, StepsSection, ProofSection, FaqSection]);

export const PageCopy = Type.Object(
  {
    hero: Type.Object(
      {
        eyebrow: Text(80, "A short line above the headline; '' for none."),
        headline: Type.String({ minLength: 1, maxLength: 140, description: 'The page’s main heading.' }),
        subheadline: Text(400, 'One or two sentences under the headline.'),
      },
      strict,
    ),
    sections: Type.Array(PageSection, { maxItems: 8, description: 'The body of the page, in order.' }),
    actions: Type.Array(
      Type.Object(
        {
          actionId: Text(200, 'The id of one of the page’s actions, as given.'),
          buttonTitle: Type.String({ minLength: 1, maxLength: 40, description: 'The button’s text.' }),
          purpose: Text(200, 'One sentence next to the button.'),
        },
        strict,
      ),
      { maxItems: 20, description: 'Call-to-action texts, one per action of the page.' },
    ),
    seo: Type.Object(
      { title: Text(70, 'The search result title.'), description: Text(160, 'The search result snippet.') },
      strict,
    ),
  },
  strict,
);

export type PageCopy = Static<typeof PageCopy>;
export type PageSection = Static<typeof PageSection>;

const checker = TypeCompiler.Compile(PageCopy);

/** Whether `value` is a PageCopy, with the first problems (path and message) when it is not. */
export function checkPageCopy(value: unknown): { ok: true; copy: PageCopy } | { ok: false; problems: string[] } {
  if (checker.Check(value)) return { ok: true, copy: value };
  const problems: string[] = [];
  for (const error of checker.Errors(value)) {
    problems.push(`${error.path || '/'}: ${error.message}`);
    if (problems.length === 8) break;
  }
  return { ok: false, problems };
}

const PLACEHOLDER = /\{\{\s*(company|name|person)\s*\}\}/g;

/** The company the audience addresses: the account's name, else its domain, else the audience's name. */
export function companyOf(input: GenerationInput): string {
  return input.person?.accountName ?? input.person?.accountDomain ?? input.audience.effectiveName;
}

/** The tenant's `{{company}}`, `{{name}}` and `{{person}}` placeholders filled for the audience. */
export function fillPlaceholders(input: GenerationInput): (text: string) => string {
  const values: Record<string, string> = {
    company: companyOf(input),
    name: input.audience.effectiveName,
    person: input.person?.name ?? input.audience.effectiveName,
  };
  return (text) => text.replace(PLACEHOLDER, (_m, key: string) => values[key] ?? '');
}

/**
 * The stored v2 artifact: the copy with the structure the tenant owns, as v1 carried it (the header
 * action, or the first, takes the audience's URL override; form actions take the form overrides;
 * the effective metadata; the enabled scripts). `title` is the headline: what visitors see as the
 * page's title (audience sessions record it).
 */
export function pageArtifact(input: GenerationInput, copy: PageCopy): GeneratedArtifact {
  const { page, audience, person } = input;
  const fill = fillPlaceholders(input);
  const headerId = page.headerActionId ?? page.actions[0]?.actionId ?? null;
  const actions = page.actions.map((action, actionIndex) => ({
    actionId: action.actionId,
    actionIndex,
    actionType: action.actionType,
    buttonTitle: fill(action.buttonTitle),
    purpose: fill(action.purpose),
    url: action.actionId === headerId && audience.actionUrlOverride !== null ? audience.actionUrlOverride : action.url,
    ...(action.actionType === 'form'
      ? { formId: audience.actionFormIdOverride, formInstructions: audience.actionFormInstructionsOverride }
      : {}),
  }));
  const known = new Set(page.actions.map((a) => a.actionId));
  return {
    contentType: PAGE_V2,
    content: {
      versionNumber: input.version.versionNumber,
      pageId: page.pageId,
      audienceId: audience.audienceId,
      pageType: page.pageType,
      brandId: page.brandId,
      title: copy.hero.headline,
      audienceName: audience.effectiveName,
      headerActionId: headerId,
      actions,
      actionCardWidgets: page.actionCardWidgets,
      footerLinks: page.footerLinks,
      scripts: page.scripts,
      metadata: input.effectiveMetadata,
      agent: {
        isNewPageAgent: input.version.isNewPageAgent,
        context: [page.pageContext, input.version.supplementaryContext].filter((c) => c).join('\n\n'),
      },
      person:
        person === null
          ? null
          : {
              personId: person.personId,
              name: person.name,
              accountName: person.accountName,
              accountDomain: person.accountDomain,
            },
      copy: { ...copy, actions: copy.actions.filter((a) => known.has(a.actionId)) },
    },
  };
}
