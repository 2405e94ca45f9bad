/**
 * Address arithmetic for subnets and endpoint address allocation, for both families. IPv4 ranges are also kept as
 * plain numbers (`first`, `last`); `lo`/`hi` are the same range as 128-bit-capable numbers for either family. HNS
 * assigns IPv6 addresses from an IPv6 subnet as it does IPv4 ones (moby/moby pull 48285: containers on a network with
 * an IPv6 subnet "get an IPv6 address assigned"); which address it picks first is our assumption (the lowest free).
 */
import { isIpv4, isIpv6, parseIp } from '../net/addr';

export interface Cidr {
  /** Text as given (HNS shows prefixes back as they were configured). */
  text: string;
  family: 4 | 6;
  bits: number;
  /** IPv4 only: first and last address of the range (0 for IPv6). */
  first: number;
  last: number;
  /** First and last address of the range, either family. */
  lo: bigint;
  hi: bigint;
}

/**
 * parsePrefix: an address prefix as HNS reads one ("a.b.c.d/n" or an IPv6 prefix, blanks around it ignored, the
 * range as numbers of its family); undefined when malformed. The address syntax is src/net's, shared with the plugin.
 */
export function parsePrefix(text: unknown): Cidr | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const bits = Number(m[2]);
  const ip = parseIp(m[1]!);
  if (!ip || bits > (ip.family === 4 ? 32 : 128)) return undefined;
  const size = 1n << BigInt((ip.family === 4 ? 32 : 128) - bits);
  const lo = ip.value - (ip.value % size);
  const hi = lo + size - 1n;
  return ip.family === 4
    ? { text, family: 4, bits, first: Number(lo), last: Number(hi), lo, hi }
    : { text, family: 6, bits, first: 0, last: 0, lo, hi };
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const v = parseIp(ip);
  return !!v && v.family === c.family && v.value >= c.lo && v.value <= c.hi;
}

/**
 * Not assignable: the network address (IPv6's subnet-router anycast address too, RFC 4291 section 2.6.1), and in
 * IPv4 the broadcast address, except in /31 and /32 (and IPv6 /127, /128, RFC 6164) where every address is. That HNS
 * skips the IPv6 subnet-router anycast address is our assumption, by analogy with IPv4's network address.
 */
export function isNetworkOrBroadcast(c: Cidr, ip: string): boolean {
  const v = parseIp(ip);
  if (!v || v.family !== c.family) return false;
  if (c.family === 4) return c.bits < 31 && (v.value === c.lo || v.value === c.hi);
  return c.bits < 127 && v.value === c.lo;
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.lo <= b.hi && b.lo <= a.hi;
}

/** An IP address or an address prefix: what policy fields such as Exceptions or DestinationPrefix hold. */
export function isIpOrCidr(s: unknown): boolean {
  return typeof s === 'string' && (isIpv4(s) || isIpv6(s) || parsePrefix(s) !== undefined);
}
