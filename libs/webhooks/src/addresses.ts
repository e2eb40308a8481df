/**
 * Which IP addresses an outgoing call to a customer's URL may connect to: deliveries, and the runner's sync
 * agent calls through @ds/platform's guarded client. Pure: the caller resolves names and passes every address
 * it would connect to; a name is allowed only when every address it resolves to is.
 */

export type AddressProblem =
  'not_an_ip' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'shared' | 'metadata' | 'unique_local' | 'ipv4_mapped' | 'multicast' | 'reserved';

/** A 4-byte IPv4 address as an unsigned integer, or null. Only dotted quads of decimal octets. */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** The eight 16-bit groups of an IPv6 address. */
export type IPv6Groups = [number, number, number, number, number, number, number, number];

const isEightGroups = (groups: number[]): groups is IPv6Groups => groups.length === 8;

/** Eight 16-bit groups of an IPv6 address (a zone id is dropped, an IPv4 tail is accepted), or null. */
export function parseIPv6(text: string): IPv6Groups | null {
  let input = text;
  const zone = input.indexOf('%');
  if (zone >= 0) input = input.slice(0, zone);
  if (input.startsWith('[') && input.endsWith(']')) input = input.slice(1, -1);
  if (!/^[0-9a-fA-F:.]+$/.test(input) || !input.includes(':')) return null;
  const lastColon = input.lastIndexOf(':');
  if (input.slice(lastColon + 1).includes('.')) {
    const v4tail = parseIPv4(input.slice(lastColon + 1));
    if (v4tail === null) return null;
    input = `${input.slice(0, lastColon + 1)}${Math.floor(v4tail / 65536).toString(16)}:${(v4tail % 65536).toString(16)}`;
  }
  const halves = input.split('::');
  if (halves.length > 2) return null;
  const group = (part: string) => (part === '' ? [] : part.split(':'));
  // split always returns at least one part; a second is there only when the text has '::'.
  const [before = '', after] = halves;
  const head = group(before);
  const rest = after === undefined ? [] : group(after);
  for (const g of [...head, ...rest]) if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
  const explicit = head.length + rest.length;
  if (halves.length === 1 && explicit !== 8) return null;
  if (halves.length === 2 && explicit > 7) return null;
  const zeros = new Array<number>(8 - explicit).fill(0);
  const groups = [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16))];
  // The counts checked above always leave eight groups; the check says so to the type.
  return isEightGroups(groups) ? groups : null;
}

const v4 = (a: number, b: number, c: number, d: number) => ((a * 256 + b) * 256 + c) * 256 + d;
const inV4 = (value: number, base: number, bits: number) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits));

const IPV4_RULES: Array<[number, number, AddressProblem]> = [
  [v4(169, 254, 169, 254), 32, 'metadata'],
  [v4(100, 100, 100, 200), 32, 'metadata'],
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link_local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'reserved'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'reserved'],
  [v4(203, 0, 113, 0), 24, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function ipv4Problem(value: number): AddressProblem | null {
  for (const [base, bits, problem] of IPV4_RULES) if (inV4(value, base, bits)) return problem;
  return null;
}

function ipv6Problem(groups: IPv6Groups): AddressProblem | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const embedded = g6 * 65536 + g7;
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // ::ffff:a.b.c.d connects to an IPv4 address whatever it is; refused outright rather than judged by its tail.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return 'ipv4_mapped';
  // IPv4-compatible (::a.b.c.d, deprecated) and IPv4-translated (::ffff:0:a.b.c.d).
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && (g4 === 0 || g4 === 0xffff) && (g5 === 0 || g5 === 0xffff)) return 'ipv4_mapped';
  // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) and 6to4 (2002::/16) reach an embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && (g2 === 0 || g2 === 1)) return ipv4Problem(embedded) ?? (g2 === 1 ? 'reserved' : null);
  if (g0 === 0x2002) return ipv4Problem(g1 * 65536 + g2);
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) return 'metadata';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique_local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link_local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved';
  if (g0 === 0x2001 && g1 === 0) return 'reserved';
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved';
  return null;
}

/** Why a delivery may not connect to `address`, or null when it may. */
export function addressProblem(address: string): AddressProblem | null {
  const ipv4 = parseIPv4(address);
  if (ipv4 !== null) return ipv4Problem(ipv4);
  const ipv6 = parseIPv6(address);
  if (ipv6 !== null) return ipv6Problem(ipv6);
  return 'not_an_ip';
}

export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== null || parseIPv6(host) !== null;
}

export type TargetProblem = 'invalid_url' | 'scheme' | 'credentials';

/** Checks of the URL itself, before any name is resolved: HTTPS only (plain HTTP when private targets are allowed), no user info. */
export function targetProblem(url: string, allowPlainHttp: boolean): TargetProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'invalid_url';
  }
  if (parsed.protocol !== 'https:' && !(allowPlainHttp && parsed.protocol === 'http:')) return 'scheme';
  if (parsed.username || parsed.password) return 'credentials';
  if (!parsed.hostname) return 'invalid_url';
  return null;
}
