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

  const shape = hostShape(domain);
  if (shape !== null) return { ok: false, reason: shape };
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if (NON_PUBLIC_TLDS.has(tld)) return { ok: false, reason: `must be a public domain ("${tld}" is reserved)` };
  return { ok: true, domain };
}

/**
 * The shape every stored host name has (ASCII, lowercase): at most 253 characters, at least two
 * labels of 1..63 letters/digits/hyphens not starting or ending with a hyphen, and a TLD that is
 * not numeric (so no IP address). Returns why it is not, or null.
 */
function hostShape(host: string): string | null {
  if (host.length > 253) return 'must be at most 253 characters';
  const labels = host.split('.');
  if (labels.length < 2) return 'must have at least two labels (e.g. example.com)';
  for (const label of labels) {
    if (label.length === 0) return 'must not contain empty labels';
    if (label.length > 63) return 'must not contain labels longer than 63 characters';
    if (!LABEL.test(label)) return `has an invalid label "${label}"`;
    if (label.startsWith('xn--') && !isPunycodeLabel(label)) return `has an invalid punycode label "${label}"`;
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) return 'must be a host name, not an IP address';
  return null;
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

/** Top-level names no browser will ever resolve to this service. */
const UNSERVABLE_TLDS = new Set(['arpa', 'invalid']);

/**
 * A host name a tenant serves pages on, as stored: lowercase, IDN as punycode, a trailing dot
 * dropped, and nothing else changed (unlike `canonicalDomain`, `www.` is kept: it is a different
 * host). Refused rather than cleaned up: a scheme, port, path, query, user, IP address, a single
 * label (`localhost`), wildcards and other non-host characters. `*.localhost` names are allowed
 * (browsers resolve them to loopback, which makes local use one click).
 */
export function canonicalHostname(input: string): DomainResult {
  let host = input.trim();
  if (host.length === 0) return { ok: false, reason: 'must not be empty' };
  if (host.length > MAX_INPUT) return { ok: false, reason: `must be at most ${MAX_INPUT} characters` };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return { ok: false, reason: 'must be a host name without a scheme' };
  if (host.startsWith('[') || /^[\d.]+$/.test(host) || (host.match(/:/g)?.length ?? 0) > 1) {
    return { ok: false, reason: 'must be a host name, not an IP address' };
  }
  if (host.includes(':')) return { ok: false, reason: 'must be a host name without a port' };
  if (/[/?#]/.test(host)) return { ok: false, reason: 'must be a host name without a path, query or fragment' };
  if (host.includes('@')) return { ok: false, reason: 'must be a host name, not an address with a user' };
  if (/[\s*_]/.test(host)) return { ok: false, reason: 'must not contain spaces, wildcards or underscores' };
  if (host.endsWith('.')) host = host.slice(0, -1);
  const ascii = domainToASCII(host);
  if (ascii === '') return { ok: false, reason: 'is not a valid host name (bad characters or invalid punycode)' };
  const hostname = ascii.toLowerCase();
  const shape = hostShape(hostname);
  if (shape !== null) return { ok: false, reason: shape };
  const tld = hostname.slice(hostname.lastIndexOf('.') + 1);
  if (UNSERVABLE_TLDS.has(tld)) return { ok: false, reason: `must be a resolvable host name ("${tld}" is reserved)` };
  return { ok: true, domain: hostname };
}

/**
 * The host name of a request's `Host` header as `canonicalHostname` stores it (lowercase, port and
 * a trailing dot removed), or null when the header is not a host name. Cheap: runs on every request.
 */
export function requestHostname(header: string | undefined): string | null {
  if (header === undefined || header.length === 0 || header.length > 260) return null;
  let end = header.length;
  const colon = header.lastIndexOf(':');
  if (colon !== -1) {
    if (header.charCodeAt(0) === 91 /* [ */) return null;
    end = colon;
  }
  if (header.charCodeAt(end - 1) === 46 /* . */) end -= 1;
  return header.slice(0, end).toLowerCase();
}
