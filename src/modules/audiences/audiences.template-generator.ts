import type { VersionGenerator } from './audiences.generator.js';

const PLACEHOLDER = /\{\{\s*(company|name|person)\s*\}\}/g;

/**
 * The built-in generator: renders the page for the audience as a JSON document the page renderer
 * serves. Placeholders ({{company}}, {{name}}, {{person}}) are filled from the audience and the
 * person; the header action (or the first one) takes the audience's URL override; form actions
 * take the form id and instructions overrides; metadata is the effective metadata.
 */
export const templateGenerator: VersionGenerator = {
  name: 'template-v1',
  async generate(input) {
    const { page, audience, person } = input;
    const values: Record<string, string> = {
      company: person?.accountName ?? person?.accountDomain ?? audience.effectiveName,
      name: audience.effectiveName,
      person: person?.name ?? audience.effectiveName,
    };
    const fill = (text: string) => text.replace(PLACEHOLDER, (_m, key: string) => values[key] ?? '');
    const headerId = page.headerActionId ?? page.actions[0]?.actionId ?? null;
    const actions = page.actions.map((action, actionIndex) => {
      const rendered: Record<string, unknown> = {
        actionId: action.actionId,
        actionIndex,
        actionType: action.actionType,
        buttonTitle: fill(action.buttonTitle),
        purpose: fill(action.purpose),
        url:
          action.actionId === headerId && audience.actionUrlOverride !== null ? audience.actionUrlOverride : action.url,
      };
      if (action.actionType === 'form') {
        rendered.formId = audience.actionFormIdOverride;
        rendered.formInstructions = audience.actionFormInstructionsOverride;
      }
      return rendered;
    });
    return {
      contentType: 'application/vnd.audience-page.v1+json',
      content: {
        versionNumber: input.version.versionNumber,
        pageId: page.pageId,
        audienceId: audience.audienceId,
        pageType: page.pageType,
        brandId: page.brandId,
        title: fill(page.title),
        audienceName: audience.effectiveName,
        headerActionId: headerId,
        actions,
        actionCardWidgets: page.actionCardWidgets,
        footerLinks: page.footerLinks,
        metadata: input.effectiveMetadata,
        agent: {
          isNewPageAgent: input.version.isNewPageAgent,
          context: [page.pageContext, input.version.supplementaryContext].filter((c) => c).join('\n\n'),
        },
        person,
      },
    };
  },
};
