import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * Company domains as the service stores them: one canonical spelling per company, so that
 * `https://www.Example.com:443/about`, `EXAMPLE.COM.` and `example.com` are the same account, and
 * internationalized names are kept in their ASCII (punycode) form: `münchen.de` is
 * `xn--mnchen-3ya.de`.
 */

export type DomainResult = { ok: true; domain: string } | { ok: false; reason: string };

const MAX_INPUT = 2048;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Names that never denote a company on the public internet (RFC 6761, RFC 8375, common LAN suffixes). */
const NON_PUBLIC_TLDS = new Set(['localhost', 'local', 'localdomain', 'internal', 'invalid', 'lan', 'home', 'arpa']);

/**
 * Canonicalizes a domain (or a URL, or an `https://www.` form a person copied from a browser):
 * lowercase; scheme, user-less authority, port, path, query, fragment, a trailing dot and a
 * leading `www.` removed; IDN to punycode ASCII. Then checks it is a public host name: at least two
 * labels, each 1..63 letters/digits/hyphens not starting or ending with a hyphen, at most 253
 * characters, a TLD that is not numeric (so no IP addresses) and not a reserved local name, and
 * valid punycode in `xn--` labels. The Public Suffix List is not consulted: `co.uk` passes.
 */
export function canonicalDomain(input: string): DomainResult {
  let host = input.trim();
  if (host.length === 0) return { ok: false, reason: 'must not be empty' };
  if (host.length > MAX_INPUT) return { ok: false, reason: `must be at most ${MAX_INPUT} characters` };

  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(host);
  if (scheme) {
    if (!/^https?$/i.test(scheme[1]!)) return { ok: false, reason: 'must be a domain or an http(s) URL' };
    host = host.slice(scheme[0].length);
  }
  host = host.split(/[/?#]/, 1)[0]!;
  if (host.includes('@')) return { ok: false, reason: 'must be a domain, not an address with a user' };
  host = host.replace(/:\d{1,5}$/, '');
  if (host.length === 0) return { ok: false, reason: 'must contain a host name' };
  if (host.includes(':') || host.startsWith('['))
    return { ok: false, reason: 'must be a host name, not an IP address' };
  if (/\s/.test(host)) return { ok: false, reason: 'must not contain spaces' };
  if (host.endsWith('.')) host = host.slice(0, -1);

  const ascii = domainToASCII(host);
  if (ascii === '') return { ok: false, reason: 'is not a valid host name (bad characters or invalid punycode)' };
  let domain = ascii.toLowerCase();
  if (domain.startsWith('www.') && domain.indexOf('.', 4) !== -1) domain = domain.slice(4);

  if (domain.length > 253) return { ok: false, reason: 'must be at most 253 characters' };
  const labels = domain.split('.');
  if (labels.length < 2) return { ok: false, reason: 'must have at least two labels (e.g. example.com)' };
  for (const label of labels) {
    if (label.length === 0) return { ok: false, reason: 'must not contain empty labels' };
    if (label.length > 63) return { ok: false, reason: 'must not contain labels longer than 63 characters' };
    if (!LABEL.test(label)) return { ok: false, reason: `has an invalid label "${label}"` };
    if (label.startsWith('xn--') && !isPunycodeLabel(label))
      return { ok: false, reason: `has an invalid punycode label "${label}"` };
  }
  const tld = labels[labels.length - 1]!;
  if (/^\d+$/.test(tld)) return { ok: false, reason: 'must be a host name, not an IP address' };
  if (NON_PUBLIC_TLDS.has(tld)) return { ok: false, reason: `must be a public domain ("${tld}" is reserved)` };
  return { ok: true, domain };
}

/**
 * An `xn--` label must be the punycode of an internationalized label: it decodes, and the decoded
 * label encodes back to it. Node 20's domainToASCII refused other `xn--` labels; Node 24's passes
 * ASCII labels through unchecked (`xn--zz`), and its domainToUnicode leaves them as they are.
 */
function isPunycodeLabel(label: string): boolean {
  const unicode = domainToUnicode(label);
  return unicode !== label && domainToASCII(unicode) === label;
}

/**
 * Email providers whose domain says nothing about the company a person works for: an address at
 * one of these never links a person to an account. Deliberately short; extend as needed.
 */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  '126.com',
  '163.com',
  'aol.com',
  'fastmail.com',
  'gmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'googlemail.com',
  'hey.com',
  'hotmail.com',
  'icloud.com',
  'live.com',
  'mac.com',
  'mail.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'outlook.com',
  'proton.me',
  'protonmail.com',
  'qq.com',
  'tutanota.com',
  'web.de',
  'yahoo.co.uk',
  'yahoo.com',
  'yandex.com',
  'yandex.ru',
  'zoho.com',
]);
