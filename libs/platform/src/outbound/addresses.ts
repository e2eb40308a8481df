import { isIPv4, isIPv6 } from 'node:net';

/**
 * Whether an address a customer's URL leads to may be connected to. Refused: every range that reaches the
 * service's own network or nothing public (RFC 6890 special-purpose registries): loopback, private, link-local
 * (cloud metadata at 169.254.169.254 included), CGNAT, "this network" and 0.0.0.0, benchmarking,
 * documentation, multicast and reserved IPv4; loopback, unspecified, link-local, site-local, unique-local
 * (AWS's fd00:ec2::254 metadata included), multicast and documentation IPv6; and every IPv6 form that embeds
 * an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4), because the kernel or a gateway may turn them
 * into that IPv4 address.
 *
 * Returns why the address is refused, or null when it is a public unicast address. A string that is not an
 * IP address is refused too: only resolved addresses are ever checked.
 */
export function forbiddenAddressReason(address: string): string | null {
  if (isIPv4(address)) return forbiddenIpv4(ipv4Octets(address));
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv6(bare)) return forbiddenIpv6(ipv6Bytes(bare));
  return 'not an IP address';
}

type Range = [first: number[], prefixBits: number, reason: string];

const IPV4_RANGES: Range[] = [
  [[0, 0, 0, 0], 8, 'this network (0.0.0.0/8)'],
  [[10, 0, 0, 0], 8, 'private (10.0.0.0/8)'],
  [[100, 64, 0, 0], 10, 'carrier-grade NAT (100.64.0.0/10)'],
  [[127, 0, 0, 0], 8, 'loopback (127.0.0.0/8)'],
  [[169, 254, 0, 0], 16, 'link-local and cloud metadata (169.254.0.0/16)'],
  [[172, 16, 0, 0], 12, 'private (172.16.0.0/12)'],
  [[192, 0, 0, 0], 24, 'IETF protocol assignments (192.0.0.0/24)'],
  [[192, 0, 2, 0], 24, 'documentation (192.0.2.0/24)'],
  [[192, 88, 99, 0], 24, '6to4 relay anycast (192.88.99.0/24)'],
  [[192, 168, 0, 0], 16, 'private (192.168.0.0/16)'],
  [[198, 18, 0, 0], 15, 'benchmarking (198.18.0.0/15)'],
  [[198, 51, 100, 0], 24, 'documentation (198.51.100.0/24)'],
  [[203, 0, 113, 0], 24, 'documentation (203.0.113.0/24)'],
  [[224, 0, 0, 0], 4, 'multicast (224.0.0.0/4)'],
  [[240, 0, 0, 0], 4, 'reserved and broadcast (240.0.0.0/4)'],
];

const IPV6_RANGES: Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, 'unspecified (::)'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback (::1)'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 'IPv4-mapped (::ffff:0:0/96)'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 'IPv4-compatible (::/96)'],
  [[0, 0x64, 0xff, 0x9b], 96, 'NAT64 (64:ff9b::/96)'],
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'local NAT64 (64:ff9b:1::/48)'],
  [[1, 0, 0, 0, 0, 0, 0, 0], 64, 'discard-only (100::/64)'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation (2001:db8::/32)'],
  [[0x20, 0x02], 16, '6to4 (2002::/16)'],
  [[0xfc], 7, 'unique local (fc00::/7)'],
  [[0xfe, 0x80], 10, 'link-local (fe80::/10)'],
  [[0xfe, 0xc0], 10, 'site-local (fec0::/10)'],
  [[0xff], 8, 'multicast (ff00::/8)'],
];

function forbiddenIpv4(octets: number[]): string | null {
  return firstRange(IPV4_RANGES, octets);
}

function forbiddenIpv6(bytes: number[]): string | null {
  return firstRange(IPV6_RANGES, bytes);
}

function firstRange(ranges: Range[], bytes: number[]): string | null {
  for (const [first, bits, reason] of ranges) if (inRange(bytes, first, bits)) return reason;
  return null;
}

function inRange(bytes: number[], first: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const i = bit / 8;
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((first[i] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

/** The 16 bytes of a valid IPv6 address (node:net has checked it), dotted IPv4 tails included. */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /\d+\.\d+\.\d+\.\d+$/.exec(text);
  if (dotted) {
    // node:net has checked the dotted tail: four octets, which make the last two 16-bit groups.
    const v4 = ipv4Octets(dotted[0]).reduce((value, octet) => value * 256 + octet, 0);
    text = `${text.slice(0, dotted.index)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === null ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.flatMap((group) => {
    const value = parseInt(group || '0', 16);
    return [value >> 8, value & 0xff];
  });
}
