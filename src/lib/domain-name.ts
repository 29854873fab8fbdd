import { isIPv6 } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { getPublicSuffix, parse } from 'tldts';

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

/**
 * Names no tenant may claim, by suffix (the name itself or any name under it), and why: the
 * special-use names of RFC 6761 and the IANA special-use registry, multicast DNS, Tor, non-DNS
 * name spaces, DNS infrastructure, and the private-use TLD ICANN reserved in 2024. None of them is
 * served by the public DNS to browsers (and no public CA issues certificates for them), so a claim
 * could never be proven, or would only prove something about one private network. `localhost` is
 * the exception: `*.localhost` only ever reaches the visitor's own machine (see `isLocalhostName`).
 */
const SPECIAL_USE_SUFFIXES: ReadonlyMap<string, string> = new Map([
  ['test', 'is reserved for testing (RFC 6761)'],
  ['example', 'is reserved for documentation (RFC 2606, RFC 6761)'],
  ['example.com', 'is reserved for documentation (RFC 2606, RFC 6761)'],
  ['example.net', 'is reserved for documentation (RFC 2606, RFC 6761)'],
  ['example.org', 'is reserved for documentation (RFC 2606, RFC 6761)'],
  ['invalid', 'is reserved as never valid (RFC 6761)'],
  ['local', 'is multicast DNS on a local network (RFC 6762)'],
  ['home.arpa', 'is for home networks (RFC 8375)'],
  ['arpa', 'is DNS infrastructure: reverse look-ups and protocol names (RFC 3172)'],
  ['onion', 'is a Tor onion service name (RFC 7686)'],
  ['alt', 'is reserved for name spaces outside the DNS (RFC 9476)'],
  ['internal', 'is reserved for private networks and never delegated (ICANN, 2024)'],
]);

const PSL_OPTIONS = { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false };

/**
 * `localhost` and every name under it: loopback by definition (RFC 6761, and every current
 * browser resolves `*.localhost` to loopback without asking DNS), so such a name only ever
 * reaches the machine it is typed on.
 */
export function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * Why a (canonical) host name cannot be claimed by anyone, or null: a special-use name or one
 * under it, a name whose TLD is not in the Public Suffix List's ICANN section (not a TLD of the
 * public DNS: `.lan`, `.corp`, `.home`, …), or a public suffix itself (`co.uk`, `github.io`: a name
 * under which anyone registers names, so no one owns it). The PSL comes with `tldts`.
 */
function unclaimableReason(hostname: string): string | null {
  if (isLocalhostName(hostname)) return null;
  const labels = hostname.split('.');
  for (let i = 0; i < labels.length; i++) {
    const suffix = labels.slice(i).join('.');
    const why = SPECIAL_USE_SUFFIXES.get(suffix);
    if (why !== undefined) return `must not be under ".${suffix}", which ${why}`;
  }
  const tld = hostname.slice(hostname.lastIndexOf('.') + 1);
  if (!parse(tld, PSL_OPTIONS).isIcann)
    return `must be under a top-level domain of the public DNS ("${tld}" is not one)`;
  if (getPublicSuffix(hostname, PSL_OPTIONS) === hostname) {
    return 'must not be a public suffix (a name under which anyone can register names), but a name under it';
  }
  return null;
}

/**
 * A host name a tenant may claim for its pages, as stored: lowercase, IDN as punycode, a trailing
 * dot dropped, and nothing else changed (unlike `canonicalDomain`, `www.` is kept: it is a
 * different host). Refused rather than cleaned up: a scheme, port, path, query, user, IP address,
 * a single label (`localhost`), wildcards and other non-host characters, and what
 * `unclaimableReason` refuses. `*.localhost` names are allowed (browsers resolve them to loopback,
 * which makes local use one click). The service's own host names are refused by the caller.
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
  const reason = hostShape(hostname) ?? unclaimableReason(hostname);
  if (reason !== null) return { ok: false, reason };
  return { ok: true, domain: hostname };
}

/** The longest `Host` header read: a 253-character name, a colon and a port (or an IPv6 literal). */
const MAX_HOST_HEADER = 260;
/** Letters, digits and hyphens in dot-separated labels, a trailing dot, an optional port. */
const HOST_HEADER = /^([a-z0-9-]+(?:\.[a-z0-9-]+)*)\.?(?::(\d{1,5}))?$/i;
const IPV6_HOST_HEADER = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/i;

/**
 * The host name of a request's `Host` header (RFC 9110 `uri-host [":" port]`), lowercase and
 * without its port or a trailing dot, as `canonicalHostname` stores names; an IPv6 literal keeps
 * its brackets. Anything else is no host at all (null): a port that is not 1-65535 in digits,
 * several colons outside brackets, a user (`@`), a path, spaces, empty labels, non-ASCII. Page
 * hosts are looked up by this value, so a header that is not exactly a host name never reaches a
 * page. Cheap: runs on every request.
 */
export function requestHostname(header: string | undefined): string | null {
  if (header === undefined || header.length === 0 || header.length > MAX_HOST_HEADER) return null;
  const bracketed = header.charCodeAt(0) === 91; /* [ */
  const match = (bracketed ? IPV6_HOST_HEADER : HOST_HEADER).exec(header);
  if (match === null) return null;
  if (match[2] !== undefined) {
    const port = Number(match[2]);
    if (port < 1 || port > 65535) return null;
  }
  const host = match[1]!.toLowerCase();
  if (!bracketed) return host;
  return isIPv6(host) ? `[${host}]` : null;
}
