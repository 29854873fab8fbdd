import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalDomain } from './domain-name.js';

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
