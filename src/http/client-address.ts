import ipaddr from 'ipaddr.js';

/**
 * The key a client's address is rate-limited by (docs/forms.md, Abuse controls): an IPv4 address
 * as it is (an IPv4-mapped IPv6 address as its IPv4 form), an IPv6 address by its /64 — one
 * subscriber usually holds a whole /64 and can use any of its 2^64 addresses.
 */
export function clientKey(ip: string): string {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (address.kind() === 'ipv4') return address.toString();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const parts = v6.parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
