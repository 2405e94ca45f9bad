/**
 * Address syntax the configuration and results use: IPv4 addresses and CIDRs (as 32-bit numbers so containment can
 * be checked), IPv6 recognition (so an IPv6 value can be called "unsupported" rather than "malformed"), and MACs.
 */
// Not node:net's isIP*: loading node:net pulls in the stream machinery, several ms of every plugin start.

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** isIpv4: a dotted quad without leading zeros (as node:net's isIPv4). */
export function isIpv4(s: string): boolean {
  return V4.test(s);
}

/** isIpv6: RFC 4291 text form: up to eight groups, one "::", an embedded IPv4 tail, an optional %zone. */
export function isIpv6(s: string): boolean {
  if (!s.includes(':')) return false;
  const zone = s.indexOf('%');
  const addr = zone >= 0 ? s.slice(0, zone) : s;
  if (zone >= 0 && !/^[0-9A-Za-z_.~-]+$/.test(s.slice(zone + 1))) return false;
  const halves = addr.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string): string[] | undefined => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return false;
  const all = [...head, ...tail];
  let count = all.length;
  const last = all[all.length - 1];
  if (last !== undefined && last.includes('.')) {
    if (!V4.test(last)) return false;
    all.pop();
    count += 1; // an IPv4 tail fills two groups
  }
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}

/** parseIpv4: dotted quad → unsigned 32-bit number; undefined if not an IPv4 literal (leading zeros are refused). */
export function parseIpv4(s: string): number | undefined {
  if (!isIpv4(s)) return undefined;
  return s.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** formatIpv4: unsigned 32-bit number → dotted quad. */
export function formatIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

export interface Ipv4Cidr {
  /** The address part as written (may have host bits). */
  address: number;
  prefix: number;
  /** The network address (host bits cleared). */
  network: number;
  /** The last address of the range (the broadcast address for prefixes below 31). */
  last: number;
}

/** parseIpv4Cidr: "a.b.c.d/n" with n from 0 to 32; undefined if it is not that. */
export function parseIpv4Cidr(s: string): Ipv4Cidr | undefined {
  const m = /^([0-9.]+)\/(0|[1-9]\d?)$/.exec(s);
  if (!m) return undefined;
  const address = parseIpv4(m[1]!);
  const prefix = Number(m[2]);
  if (address === undefined || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  const network = address - (address % size);
  return { address, prefix, network, last: network + size - 1 };
}

/** parseIpv6: an IPv6 literal (no zone) → 128-bit number; undefined if it is not one. */
export function parseIpv6(s: string): bigint | undefined {
  if (!isIpv6(s) || s.includes('%')) return undefined;
  let text = s;
  const last = text.slice(text.lastIndexOf(':') + 1);
  if (last.includes('.')) {
    // An embedded IPv4 tail ("::ffff:10.0.0.1") is two groups.
    const v4 = parseIpv4(last)!;
    text = `${text.slice(0, text.length - last.length)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** formatIpv6: 128-bit number → RFC 5952 text (lower case, the longest run of two or more zero groups as "::"). */
export function formatIpv6(n: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export interface IpCidr {
  family: 4 | 6;
  /** The address part as written (may have host bits). */
  address: bigint;
  prefix: number;
  network: bigint;
  last: bigint;
}

/** parseCidr: an IPv4 or IPv6 CIDR as numbers of its family; undefined if it is neither. */
export function parseCidr(s: string): IpCidr | undefined {
  const slash = s.lastIndexOf('/');
  if (slash < 0 || !/^(0|[1-9]\d{0,2})$/.test(s.slice(slash + 1))) return undefined;
  const prefix = Number(s.slice(slash + 1));
  const v4 = parseIpv4(s.slice(0, slash));
  const family = v4 !== undefined ? 4 : 6;
  const address = v4 !== undefined ? BigInt(v4) : parseIpv6(s.slice(0, slash));
  const width = family === 4 ? 32 : 128;
  if (address === undefined || prefix > width) return undefined;
  const size = 1n << BigInt(width - prefix);
  const network = address - (address % size);
  return { family, address, prefix, network, last: network + size - 1n };
}

/** parseIp: an IPv4 or IPv6 literal as a number of its family. */
export function parseIp(s: string): { family: 4 | 6; value: bigint } | undefined {
  const v4 = parseIpv4(s);
  if (v4 !== undefined) return { family: 4, value: BigInt(v4) };
  const v6 = parseIpv6(s);
  return v6 === undefined ? undefined : { family: 6, value: v6 };
}

/** formatIp: a number of the given family as text (IPv6 in RFC 5952 form). */
export function formatIp(family: 4 | 6, value: bigint): string {
  return family === 4 ? formatIpv4(Number(value)) : formatIpv6(value);
}

/** canonicalIp: one text form per address ("FD00:0::0102" and "fd00::102" are the same address); others unchanged. */
export function canonicalIp(s: string): string {
  const ip = parseIp(s);
  return ip ? formatIp(ip.family, ip.value) : s;
}

/** isIpCidr: an IPv4 or IPv6 CIDR (results may carry either), as CNI reads one (no IPv6 zone: see familyOf). */
export function isIpCidr(s: string): boolean {
  return parseCidr(s) !== undefined;
}

/** isIpAddress: an IPv4 or IPv6 address as CNI reads one (no IPv6 zone: see familyOf). */
export function isIpAddress(s: string): boolean {
  return parseIp(s) !== undefined;
}

/**
 * familyOf: 4 or 6 for an address or CIDR; undefined for neither. An IPv6 address with a zone ("fe80::1%eth0") is
 * neither: CNI reads addresses with Go's net.ParseIP and prefixes with net.ParseCIDR, which refuse a zone (golang/go
 * src/net/ip.go ParseIP, ParseCIDR; containernetworking/cni pkg/types/types.go ParseCIDR and IPNet.UnmarshalJSON), and
 * HNS's IpConfig has an address and a prefix length but no zone (microsoft/hcsshim hcn/hcnendpoint.go IpConfig).
 */
export function familyOf(addressOrCidr: string): 4 | 6 | undefined {
  const slash = addressOrCidr.lastIndexOf('/');
  return parseIp(slash < 0 ? addressOrCidr : addressOrCidr.slice(0, slash))?.family;
}

/** ipFamily: familyOf as the pre-1.0.0 `ips[].version` spells it, "4" or "6". */
export function ipFamily(addressOrCidr: string): '4' | '6' | undefined {
  const family = familyOf(addressOrCidr);
  return family === undefined ? undefined : family === 4 ? '4' : '6';
}

/** parseMac: colon-, dash-separated or bare hex → six bytes; undefined if it is none of those. */
export function parseMac(s: string): number[] | undefined {
  let hex: string;
  if (/^[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}$/.test(s)) hex = s.replace(/[:-]/g, '');
  else if (/^[0-9A-Fa-f]{12}$/.test(s)) hex = s;
  else return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < 12; i += 2) bytes.push(parseInt(hex.slice(i, i + 2), 16));
  return bytes;
}

/**
 * unicastMacProblem: why a MAC cannot be a NIC's address, or undefined. All-zero is "no address", and the
 * group bit (low bit of the first octet) marks multicast, which covers broadcast FF-FF-FF-FF-FF-FF too.
 */
export function unicastMacProblem(bytes: readonly number[]): string | undefined {
  if (bytes.every((b) => b === 0)) return 'the all-zero address';
  if (bytes.every((b) => b === 0xff)) return 'the broadcast address';
  if ((bytes[0]! & 1) === 1) return 'a multicast address';
  return undefined;
}

/** formatMacDash: "AA-BB-CC-DD-EE-FF", the form HNS uses. */
export function formatMacDash(bytes: readonly number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join('-');
}

/** formatMacColon: "aa:bb:cc:dd:ee:ff", the form CNI results carry. */
export function formatMacColon(bytes: readonly number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}
