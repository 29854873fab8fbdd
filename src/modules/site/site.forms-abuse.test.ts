import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, rowCounts, useTestApp } from '../../../test/harness.js';

/** Abuse controls on page forms (issue 26, docs/forms.md): declared bots, addresses grouped by /64. */
const t = useTestApp({ tenants: ['Alice'], config: { FORM_SUBMISSIONS_PER_MINUTE: '3' } });
const [alice] = t.tenants;
const HOST = 'go.abuse.localhost';
let base: Record<string, string>;
let n = 0;

const post = (ip: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/offers',
    remoteAddress: ip,
    headers: {
      host: HOST,
      'content-type': 'application/json',
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      ...headers,
    },
    payload: { ...base, email: `visitor${++n}@corp.example` },
  });

beforeAll(async () => {
  const pageId = await makePage(alice.scope, t.clock, {
    title: 'Offers',
    actions: [{ purpose: 'Talk to us', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
  });
  const { audienceId } = await makeAudience(alice.scope, t.clock, {
    pageId,
    computedName: 'All',
    personRouteKey: null,
  });
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers', audienceId });
  const page = await visit(t, HOST, '/offers');
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)?.[1] ?? '';
  base = { ap_audience: hidden('ap_audience'), ap_action: hidden('ap_action') };
});

describe('forms refuse', () => {
  it('a client whose User-Agent declares a bot (403 bot_refused), writing nothing', async () => {
    const before = await rowCounts(alice, ['form_submissions', 'persons']);
    for (const ua of ['curl/8.5.0', 'python-requests/2.32.3', 'Mozilla/5.0 (compatible; Googlebot/2.1)']) {
      const res = await post('198.51.100.1', { 'user-agent': ua });
      expect(res.statusCode).toBe(403);
      expect(problem(res).code).toBe('bot_refused');
    }
    expect(await rowCounts(alice, ['form_submissions', 'persons'])).toEqual(before);
    const browser = await post('198.51.100.2');
    expect(browser.statusCode).toBe(201);
  });

  it('more forms than the limit from one IPv6 /64, whichever of its addresses sends them', async () => {
    const codes = [];
    for (let i = 1; i <= 4; i++) codes.push((await post(`2001:db8:77:1::${i.toString(16)}`)).statusCode);
    expect(codes).toEqual([201, 201, 201, 429]);
    // another /64 has its own budget
    expect((await post('2001:db8:77:2::1')).statusCode).toBe(201);
  });
});
