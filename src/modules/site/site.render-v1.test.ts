import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FormState } from './site.render.js';
import { pageModel } from './site.model.js';
import { renderPage } from './site.render.js';

/**
 * Versions stored before the v2 page keep their bytes: a v1 artifact (made by the retired
 * `template-v1` generator) renders exactly as it did when the fixture was recorded. One change
 * since, made on purpose in both fixtures: the form's hidden `ap_elapsed` became `ap_stamp` (the
 * fill time counted by the service, issue 26).
 */
const fixture = (name: string) => fs.readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), 'utf8');
const artifact: unknown = JSON.parse(fixture('page-v1.artifact.json'));
const ctx = {
  origin: 'https://pages.example.com',
  viewToken: 'audience_01.sig',
  assets: { stylesheet: '/_ap/page.abc.css', script: '/_ap/page.def.js' },
};
const flagged = pageModel(artifact, (kind, id) => `/_ap/img/${kind}/${id}`);
// The fixture predates the on-page agent: its bytes are the page without the widget.
const model = { ...flagged, agent: false };

describe('a stored v1 version', () => {
  it('renders byte for byte as before, with the same CSP', () => {
    const page = renderPage(model, ctx);
    expect(page.html).toBe(fixture('page-v1.html'));
    expect(page.csp).toBe(fixture('page-v1.csp.txt'));
  });

  it('renders a refused form shown again byte for byte as before', () => {
    const formState = {
      actionId: 'act_3',
      values: { email: 'bad', name: '<x>' },
      problems: [{ field: 'email', message: 'Enter an email' }],
    } as FormState;
    expect(renderPage(model, ctx, formState).html).toBe(fixture('page-v1.form-state.html'));
  });

  it('adds the on-page agent, and nothing else, when the version has isNewPageAgent (docs/agent.md)', () => {
    expect(flagged.agent).toBe(true);
    const page = renderPage(flagged, ctx);
    const widget = /<section class="ap-agent"[\s\S]*?<\/section>/.exec(page.html);
    expect(widget?.[0]).toContain('Ask a question');
    expect(page.html.replace(widget![0], '')).toBe(fixture('page-v1.html'));
    expect(page.csp).toBe(fixture('page-v1.csp.txt'));
  });
});
