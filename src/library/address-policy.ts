/**
 * Which network addresses a capture may connect to: a pure function over one IP address.
 * @remarks Only globally routable unicast addresses are allowed. Everything else is refused with the
 * name of its range: private (RFC 1918), loopback, link-local, cloud metadata endpoints, unspecified,
 * broadcast, multicast, carrier-grade NAT (RFC 6598), reserved and documentation ranges, IPv6 unique
 * local and site-local, and translation prefixes that can embed any IPv4 address (NAT64, 6to4,
 * Teredo). An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is judged as the IPv4 address it carries.
 * Range tables come from `ipaddr.js` (a maintained, dependency-free parser).
 * @module
 */
import ipaddr from 'ipaddr.js';

/** Well-known cloud instance-metadata addresses (AWS, GCP, Azure, ECS, Alibaba, Oracle). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.169.253', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254', 'fd00:ec2::23']);

/** The verdict on one address. */
export interface AddressVerdict {
  allowed: boolean;
  /** The range the address falls in: `unicast` when allowed, e.g. `loopback`, `metadata`, `private`, `ipv4Mapped:private`. */
  range: string;
}

/**
 * Judge one IP address (IPv4 dotted quad or IPv6, optionally with a zone) for an outgoing capture.
 * @returns allowed only for global unicast; anything that does not parse as an IP is refused as `invalid`.
 */
export function checkAddress(address: string): AddressVerdict {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return { allowed: false, range: 'invalid' };
  let parsed = ipaddr.parse(bare);
  let prefix = '';
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      parsed = v6.toIPv4Address();
      prefix = 'ipv4Mapped:';
    }
  }
  if (METADATA_ADDRESSES.has(parsed.toString().replace(/%.*$/, ''))) return { allowed: false, range: `${prefix}metadata` };
  const range = parsed.range();
  return { allowed: range === 'unicast', range: `${prefix}${range}` };
}

/**
 * True when `hostname` (as in `URL.hostname`, IPv6 in brackets) is an IP literal rather than a name.
 */
export function isIpLiteral(hostname: string): boolean {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || (bare.includes(':') && ipaddr.IPv6.isValid(bare));
}
