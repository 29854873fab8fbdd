import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { isLocalhostName } from '../lib/domain-name.js';

/**
 * Decides whether the service may connect to an IP address. Deliveries judge the address that is
 * actually dialled (after DNS), never the URL text. Injectable so tests can call one loopback
 * alias "public" while another stays a blocked canary.
 */
export type AddressPolicy = (ip: string) => boolean;

/**
 * True only for global unicast addresses. Uses ipaddr.js's range table (loopback, private,
 * link-local incl. 169.254.169.254, CGNAT, unique-local incl. fd00:ec2::254, multicast, reserved
 * and documentation ranges, benchmarking, …) and unwraps every form that embeds an IPv4 address
 * (IPv4-mapped, IPv4-translated, NAT64, 6to4, Teredo) so the embedded address is judged too.
 * IPv6 must also lie in 2000::/3, the only space allocated for global unicast.
 */
export function isGlobalUnicast(ip: string): boolean {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return false;
  }
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  const parts = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return v4(parts[6]!, parts[7]!).range() === 'unicast';
    case 'rfc6052':
      // 64:ff9b::/96 embeds a public IPv4 address; 64:ff9b:1::/48 is for local use only.
      return parts[2] === 0 && v4(parts[6]!, parts[7]!).range() === 'unicast';
    case '6to4':
      return v4(parts[1]!, parts[2]!).range() === 'unicast';
    case 'teredo':
      return (
        v4(parts[2]!, parts[3]!).range() === 'unicast' &&
        v4(~parts[6]! & 0xffff, ~parts[7]! & 0xffff).range() === 'unicast'
      );
    case 'unicast':
      return (parts[0]! & 0xe000) === 0x2000;
    default:
      return false;
  }
}

export const allowEverything: AddressPolicy = () => true;

/** The policy of a configuration: everything when WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. */
export function addressPolicy(allowPrivateNetworks: boolean): AddressPolicy {
  return allowPrivateNetworks ? allowEverything : isGlobalUnicast;
}

/**
 * Which ports a webhook may reach. Without a rule a tenant could make the service POST to any
 * port of any public host (mail, database and admin ports included); with it, only web servers.
 */
export type PortRule = (port: number) => boolean;

/** 80 and 443, plus the ports of WEBHOOK_ALLOWED_PORTS. */
export function portRule(extraPorts: readonly number[]): PortRule {
  const allowed = new Set([80, 443, ...extraPorts]);
  return (port) => allowed.has(port);
}

/** The port a URL reaches: the explicit one, or its scheme's default. */
export function portOf(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Whether outgoing requests carrying personal data or tokens (webhooks, the enricher) must use
 * `https:`: in production, yes; development keeps `http:` for receivers on the developer's machine.
 */
export function httpsOnlyIn(config: { nodeEnv: string | null }): boolean {
  return config.nodeEnv === 'production';
}

/**
 * The creation-time check of a subscription URL: fast feedback only, the real check is made on
 * every connection. Returns what is wrong, or null. `new URL` has already turned `2130706433`,
 * `0x7f.1` and `127.1` into `127.0.0.1`, so IP literals are judged in their canonical form.
 * `httpsOnly` (production): plain `http:` is refused too.
 */
export function webhookUrlProblem(
  text: string,
  policy: AddressPolicy,
  ports: PortRule,
  httpsOnly = false,
): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (httpsOnly && url.protocol !== 'https:') return 'must use https (plain http is refused in production)';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.hostname === '') return 'must have a host';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = net.isIP(host) !== 0;
  const localName = isLocalhostName(host);
  if ((literal && !policy(host)) || (localName && !policy('127.0.0.1'))) {
    return 'must not point to a loopback, private, link-local or otherwise non-public address';
  }
  if (!ports(portOf(url))) return 'must use port 80 or 443 (or a port the operator allows)';
  return null;
}
