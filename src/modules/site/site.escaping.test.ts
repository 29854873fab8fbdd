import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { safeHref } from './site.model.js';

/** Hostile text: closes elements, breaks out of attributes, opens scripts, handlers, entities. */
const XSS = [
  '</title><script>alert(1)</script>',
  '"><img src=x onerror=alert(2)>',
  "' onmouseover='alert(3)",
  '<svg/onload=alert(4)>',
  '&lt;script&gt;alert(5)&lt;/script&gt;',
  '</style></noscript><iframe srcdoc="<script>alert(6)</script>">',
];
const BAD_URLS = [
  'javascript:alert(7)',
  ' JaVaScRiPt:alert(8)',
  'java\tscript:alert(9)',
  'data:text/html,<script>alert(10)</script>',
  'vbscript:msgbox(11)',
  '//evil.example/x',
  'file:///etc/passwd',
  '"><script>alert(12)</script>',
];

/**
 * The elements of an HTML document as a browser tokenizes them (enough for what our renderer
 * writes): tag names with their attributes; the text of script and style elements is raw text.
 */
function elements(doc: string): { tag: string; attributes: Record<string, string> }[] {
  const found: { tag: string; attributes: Record<string, string> }[] = [];
  let i = 0;
  while ((i = doc.indexOf('<', i)) !== -1) {
    const name = /^<([a-zA-Z][a-zA-Z0-9-]*)/.exec(doc.slice(i));
    if (name === null) {
      i += 1;
      continue;
    }
    i += name[0].length;
    const attributes: Record<string, string> = {};
    for (;;) {
      const attr = /^\s*([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/.exec(doc.slice(i));
      if (attr === null) break;
      attributes[attr[1]!.toLowerCase()] = attr[2] ?? attr[3] ?? attr[4] ?? '';
      i += attr[0].length;
    }
    i = doc.indexOf('>', i) + 1;
    const tag = name[1]!.toLowerCase();
    found.push({ tag, attributes });
    if (tag === 'script' || tag === 'style' || tag === 'title') i = doc.toLowerCase().indexOf(`</${tag}`, i);
  }
  return found;
}

let t: TestApp;
let alice: Tenant;
let html: string;
let csp: string;

beforeAll(async () => {
  t = await startTestApp();
  alice = await t.createTenant('Alice');
  const x = (i: number) => XSS[i % XSS.length]!;
  const pageId = await makePage(alice.scope, t.clock, {
    title: `${x(0)} {{company}}`,
    actions: [
      { purpose: x(1), buttonTitle: x(2), actionType: 'link', url: BAD_URLS[0]! },
      { purpose: x(3), buttonTitle: x(4), actionType: 'form', url: BAD_URLS[1]! },
      ...BAD_URLS.slice(2).map((url, i) => ({ purpose: x(i), buttonTitle: x(i + 1), actionType: 'link', url })),
      { purpose: 'Safe', buttonTitle: 'Mail us', actionType: 'link', url: 'mailto:sales@example.com' },
    ],
    headerActionIndex: 1,
    actionCardWidgets: [
      {
        type: x(5),
        title: x(0),
        logos: [
          ...BAD_URLS.map((url, i) => ({ image: { altText: x(i), url, fileId: x(i + 1), assetId: x(i + 2) } })),
          { image: { altText: 'Acme logo', url: 'https://cdn.example.com/acme.png', fileId: '', assetId: '' } },
        ],
      },
    ],
    footerLinks: [
      {
        id: x(1),
        title: x(2),
        links: BAD_URLS.map((url, i) => ({ id: x(i), text: x(i + 3), url })),
      },
    ],
    scripts: [
      {
        name: 'on',
        description: '',
        content: 'window.tenantRan = "</script><script>alert(13)</script>";',
        enabled: true,
      },
      { name: 'off', description: '', content: 'window.disabledScriptRan = true;', enabled: false },
    ],
    metadata: {
      title: x(0),
      description: x(1),
      keywords: [x(2), x(3)],
      author: x(4),
      robots: [x(5)],
      canonicalUrl: BAD_URLS[0]!,
      ogTitle: x(1),
      ogDescription: x(2),
      ogImageUrl: BAD_URLS[3]!,
      ogImageAlt: x(3),
      ogSiteName: x(4),
      ogUrl: BAD_URLS[2]!,
      twitterTitle: x(5),
      twitterDescription: x(0),
      twitterImageUrl: BAD_URLS[4]!,
      twitterImageAlt: x(1),
      twitterSite: x(2),
      twitterCreator: x(3),
      themeColor: 'red;background:url(javascript:alert(14))',
    },
  });
  const { audienceId } = await makeAudience(alice.scope, t.clock, {
    pageId,
    computedName: x(1),
    actionFormInstructionsOverride: x(2),
    actionFormIdOverride: x(3),
  });
  await linkOnHost(t, alice, { hostname: 'xss.alice.localhost', path: '/p', audienceId });
  const res = await visit(t, 'xss.alice.localhost', '/p');
  expect(res.statusCode).toBe(200);
  html = res.body;
  csp = res.headers['content-security-policy'] as string;
});
afterAll(() => t.close());

describe('escaping', () => {
  it('shows hostile text as text: no element, attribute or handler comes from it', () => {
    const all = elements(html);
    // the only script elements: our loader and the one enabled tenant script (whose text is JavaScript)
    expect(all.filter((e) => e.tag === 'script')).toHaveLength(2);
    expect(all.map((e) => e.tag).filter((tag) => ['img', 'svg', 'iframe', 'style', 'noscript'].includes(tag))).toEqual([
      'img',
    ]);
    for (const element of all) {
      for (const name of Object.keys(element.attributes)) expect(name, element.tag).not.toMatch(/^on|^srcdoc$/);
    }
    expect(all.filter((e) => e.tag === 'title')).toHaveLength(1);
    expect(html).toContain('&lt;/title>&lt;script>alert(1)&lt;/script>');
    // already-escaped text stays as written (escaped once more, not decoded)
    expect(html).toContain('&amp;lt;script&amp;gt;alert(5)');
    // attribute values are quoted and escaped
    expect(html).toContain('content="&quot;>&lt;img src=x onerror=alert(2)>"');
  });

  it('makes links only of http, https, mailto and tel URLs', () => {
    const targets = elements(html)
      .flatMap((e) => [e.attributes.href, e.attributes.src, e.tag === 'meta' ? e.attributes.content : undefined])
      .filter((v): v is string => v !== undefined)
      .map((v) => v.trim().toLowerCase());
    expect(targets.length).toBeGreaterThan(10);
    for (const target of targets) {
      expect(target).not.toMatch(/^(javascript|data|vbscript|file):/);
      expect(target).not.toMatch(/^\/\//);
    }
    expect(html).toContain('href="mailto:sales@example.com"');
    expect(html).toContain('src="https://cdn.example.com/acme.png"');
    expect(html).not.toMatch(/rel="canonical"/);
    // a bad theme colour is shown in the meta tag (escaped) but never used as a style
    expect(elements(html).find((e) => e.tag === 'html')!.attributes.style).toBeUndefined();
  });

  it('runs the enabled scripts as written and never a disabled one, with a matching CSP hash', () => {
    expect(html).toContain('window.tenantRan = "<\\/script><script>alert(13)<\\/script>";');
    expect(html).not.toContain('disabledScriptRan');
    expect(csp.match(/'sha256-/g)).toHaveLength(2);
  });

  it('safeHref: the URL parser decides the scheme', () => {
    for (const url of BAD_URLS) expect(safeHref(url), url).toBeNull();
    expect(safeHref('https://example.com/a b')).toBe('https://example.com/a%20b');
    expect(safeHref('tel:+14155550100')).toBe('tel:+14155550100');
    expect(safeHref('/pricing?x=1#y')).toBe('/pricing?x=1#y');
    expect(safeHref('/\\evil.example')).toBeNull();
    expect(safeHref('pricing')).toBeNull();
    expect(safeHref(42)).toBeNull();
  });
});
