import { describe, expect, it } from 'vitest';
import { makeAudience } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { linkOnHost, visit } from '../factories/site.js';
import { useTestApp } from '../harness.js';

/**
 * Wake-ups are registered where work is queued and sent once its transaction committed
 * (TenantScope.afterCommit), whoever built the scope: here a visitor's form submission, whose
 * scope the page host's handler makes, wakes the webhook delivery and the enrichment workers.
 */
const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

describe('wake-ups of a visitor’s request', () => {
  it('a form submission wakes its events and its enrichment once committed; a resubmission wakes nothing', async () => {
    const pageId = await makePage(alice.scope, t.clock, {
      actions: [{ purpose: 'Talk', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
    });
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId, personRouteKey: null });
    await linkOnHost(t, alice, { hostname: 'go.wake.localhost', path: '/talk', audienceId });
    const html = (await visit(t, 'go.wake.localhost', '/talk')).body;
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
    const submit = () =>
      t.app.inject({
        method: 'POST',
        url: '/talk',
        headers: {
          host: 'go.wake.localhost',
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        },
        payload: new URLSearchParams({
          ap_audience: hidden('ap_audience'),
          ap_action: hidden('ap_action'),
          email: 'jane@wake-corp.example',
          message: 'Hello',
        }).toString(),
      });

    t.notified.length = 0;
    expect((await submit()).statusCode).toBe(303);
    expect([...t.notified].sort()).toEqual(['enrichment', 'events']);

    t.notified.length = 0;
    expect((await submit()).statusCode).toBe(303);
    expect(t.notified).toEqual([]);
  });
});
