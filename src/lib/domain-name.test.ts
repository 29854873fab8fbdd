import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalDomain, canonicalHostname, isLocalhostName, requestHostname } from './domain-name.js';

describe('canonicalDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['EXAMPLE.COM', 'example.com'],
    ['  example.com  ', 'example.com'],
    ['https://www.Example.com:8443/about?x=1#top', 'example.com'],
    ['http://example.com/', 'example.com'],
    ['www.example.com', 'example.com'],
    ['example.com.', 'example.com'],
    ['sub.example.co.uk', 'sub.example.co.uk'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['https://www.MÜNCHEN.de/', 'xn--mnchen-3ya.de'],
    ['xn--mnchen-3ya.de', 'xn--mnchen-3ya.de'],
    ['ＥＸＡＭＰＬＥ.com', 'example.com'],
    ['www.com', 'www.com'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalDomain(input)).toEqual({ ok: true, domain: expected });
  });

  it.each([
    '',
    '   ',
    'http://',
    'https:///path',
    'localhost',
    'LOCALHOST.',
    'printer.local',
    'intranet',
    '..com',
    'a..com',
    '.example.com',
    'exa mple.com',
    `${'a'.repeat(300)}.com`,
    `${'a'.repeat(64)}.com`,
    `${'abcdefghij.'.repeat(23)}com`,
    'xn--zz.com',
    'xn--.com',
    '127.0.0.1',
    '0x7f.1',
    '[::1]',
    'http://[2001:db8::1]/',
    'user@example.com',
    'ftp://example.com',
    '-example.com',
    'example-.com',
    'exa_mple.com',
    'example.123',
  ])('rejects %j', (input) => {
    const result = canonicalDomain(input);
    expect(result.ok).toBe(false);
  });

  it('is idempotent: a canonical domain canonicalizes to itself', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'de', 'io'), (ls, tld) => {
        const first = canonicalDomain([...ls, tld].join('.'));
        if (!first.ok) return;
        expect(canonicalDomain(first.domain)).toEqual(first);
        expect(canonicalDomain(`https://WWW.${first.domain.toUpperCase()}:443/x`)).toEqual(first);
      }),
    );
  });
});

describe('requestHostname (the Host header)', () => {
  it.each([
    ['pages.acme.com', 'pages.acme.com'],
    ['Pages.ACME.com', 'pages.acme.com'],
    ['pages.acme.com:8080', 'pages.acme.com'],
    ['pages.acme.com:1', 'pages.acme.com'],
    ['pages.acme.com:65535', 'pages.acme.com'],
    ['pages.acme.com.', 'pages.acme.com'],
    ['PAGES.acme.com.:443', 'pages.acme.com'],
    ['localhost:3000', 'localhost'],
    ['acme-1a2b3c.localhost', 'acme-1a2b3c.localhost'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['[::1]', '[::1]'],
    ['[::1]:3000', '[::1]'],
    ['[2001:DB8::1]:443', '[2001:db8::1]'],
    ['[::ffff:127.0.0.1]', '[::ffff:127.0.0.1]'],
  ])('%j → %j', (header, expected) => expect(requestHostname(header)).toBe(expected));

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['a port that is not digits', 'pages.acme.com:8o'],
    ['a signed port', 'pages.acme.com:+80'],
    ['an empty port', 'pages.acme.com:'],
    ['port 0', 'pages.acme.com:0'],
    ['a port above 65535', 'pages.acme.com:65536'],
    ['a six-digit port', 'pages.acme.com:000080'],
    ['several colons', 'pages.acme.com:80:80'],
    ['a bare IPv6 address', '::1'],
    ['userinfo and a path after the port colon', 'pages.acme.com:@evil.example/phish'],
    ['userinfo', 'user@pages.acme.com'],
    ['a path', 'pages.acme.com/pricing'],
    ['a query', 'pages.acme.com?x=1'],
    ['a space', 'pages .acme.com'],
    ['a trailing space', 'pages.acme.com '],
    ['a tab', 'pages.acme.com\t'],
    ['a leading dot', '.pages.acme.com'],
    ['an empty label', 'pages..acme.com'],
    ['two trailing dots', 'pages.acme.com..'],
    ['only a port', ':80'],
    ['non-ASCII (browsers send punycode)', 'bücher.example'],
    ['an underscore', 'pages_acme.com'],
    ['an unclosed bracket', '[::1'],
    ['junk after the bracket', '[::1]x'],
    ['a bracketed non-address', '[pages.acme.com]'],
    ['a bracketed bad port', '[::1]:99999'],
    ['too long', `${'a'.repeat(300)}.com`],
  ])('refuses %s', (_name, header) => expect(requestHostname(header)).toBeNull());
});

describe('canonicalHostname: names no tenant may claim', () => {
  it.each([
    ['shop.acme.com', 'shop.acme.com'],
    ['acme.co.uk', 'acme.co.uk'],
    ['acme.github.io', 'acme.github.io'],
    ['pages.xn--bcher-kva.de', 'pages.xn--bcher-kva.de'],
    ['acme-1a2b3c.localhost', 'acme-1a2b3c.localhost'],
    ['a.b.localhost', 'a.b.localhost'],
  ])('accepts %s', (input, expected) => expect(canonicalHostname(input)).toEqual({ ok: true, domain: expected }));

  it.each([
    ['api.example.test', '".test"'],
    ['x.test', 'RFC 6761'],
    ['go.northwind.example', '".example"'],
    ['www.example.com', '".example.com"'],
    ['example.org', '".example.org"'],
    ['a.example.net', 'documentation'],
    ['x.invalid', '".invalid"'],
    ['printer.local', 'RFC 6762'],
    ['nas.home.arpa', '".home.arpa"'],
    ['1.0.0.127.in-addr.arpa', '".arpa"'],
    ['metadata.google.internal', '".internal"'],
    ['x.onion', 'RFC 7686'],
    ['x.alt', 'RFC 9476'],
    ['router.lan', '"lan" is not one'],
    ['mail.corp', '"corp" is not one'],
    ['fileserver.home', '"home" is not one'],
    ['co.uk', 'public suffix'],
    ['github.io', 'public suffix'],
    ['s3.amazonaws.com', 'public suffix'],
  ])('refuses %s', (input, reason) => {
    const result = canonicalHostname(input);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain(reason);
  });

  it('knows localhost names', () => {
    expect(isLocalhostName('localhost')).toBe(true);
    expect(isLocalhostName('acme.localhost')).toBe(true);
    expect(isLocalhostName('localhost.acme.com')).toBe(false);
    expect(isLocalhostName('notlocalhost')).toBe(false);
  });
});
