/**
 * Address arithmetic for subnets and endpoint address allocation, for both families. IPv4 ranges are also kept as
 * plain numbers (`first`, `last`); `lo`/`hi` are the same range as 128-bit-capable numbers for either family. HNS
 * assigns IPv6 addresses from an IPv6 subnet as it does IPv4 ones (moby/moby pull 48285: containers on a network with
 * an IPv6 subnet "get an IPv6 address assigned"); which address it picks first is our assumption (the lowest free).
 */
import { isIPv4, isIPv6 } from 'node:net';

export function ipToInt(ip: string): number | undefined {
  if (!isIPv4(ip)) return undefined;
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** An IPv4 or IPv6 literal as a number of its family; undefined when it is neither. */
export function ipValue(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const v4 = ipToInt(ip);
  if (v4 !== undefined) return { family: 4, value: BigInt(v4) };
  if (!isIPv6(ip) || ip.includes('%')) return undefined;
  let text = ip;
  const tail = text.slice(text.lastIndexOf(':') + 1);
  if (tail.includes('.')) {
    const n = ipToInt(tail)!;
    text = `${text.slice(0, text.length - tail.length)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = rest ? rest.split(':') : [];
  const groups = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { family: 6, value: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

/**
 * A number of a family as text, IPv6 in RFC 5952 form. That HNS shows addresses in that form is our assumption (no
 * captured IPv6 output; it is the form Go's net.IP.String gives, which hcsshim's v1 IPv6Address round-trips).
 */
export function valueToIp(family: 4 | 6, value: bigint): string {
  if (family === 4) return intToIp(Number(value));
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j > i ? j : i + 1;
  }
  const hex = groups.map((g) => g.toString(16));
  return best < 0 ? hex.join(':') : `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** One spelling per address, so "FD00:0::0102" and "fd00::102" are the same held address. */
export function canonicalIp(ip: string): string {
  const v = ipValue(ip);
  return v ? valueToIp(v.family, v.value) : ip;
}

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

/** Parses "a.b.c.d/n" or an IPv6 prefix; undefined when malformed. */
export function parseCidr(text: unknown): Cidr | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const bits = Number(m[2]);
  const ip = ipValue(m[1]!);
  if (!ip || bits > (ip.family === 4 ? 32 : 128)) return undefined;
  const size = 1n << BigInt((ip.family === 4 ? 32 : 128) - bits);
  const lo = ip.value - (ip.value % size);
  const hi = lo + size - 1n;
  return ip.family === 4
    ? { text, family: 4, bits, first: Number(lo), last: Number(hi), lo, hi }
    : { text, family: 6, bits, first: 0, last: 0, lo, hi };
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const v = ipValue(ip);
  return !!v && v.family === c.family && v.value >= c.lo && v.value <= c.hi;
}

/**
 * Not assignable: the network address (IPv6's subnet-router anycast address too, RFC 4291 section 2.6.1), and in
 * IPv4 the broadcast address, except in /31 and /32 (and IPv6 /127, /128, RFC 6164) where every address is. That HNS
 * skips the IPv6 subnet-router anycast address is our assumption, by analogy with IPv4's network address.
 */
export function isNetworkOrBroadcast(c: Cidr, ip: string): boolean {
  const v = ipValue(ip);
  if (!v || v.family !== c.family) return false;
  if (c.family === 4) return c.bits < 31 && (v.value === c.lo || v.value === c.hi);
  return c.bits < 127 && v.value === c.lo;
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.lo <= b.hi && b.lo <= a.hi;
}

/** An IP address or an address prefix: what policy fields such as Exceptions or DestinationPrefix hold. */
export function isIpOrCidr(s: unknown): boolean {
  return typeof s === 'string' && (isIPv4(s) || isIPv6(s) || parseCidr(s) !== undefined);
}

/** The default route's destination for a family. */
export function defaultRoute(family: 4 | 6): string {
  return family === 4 ? '0.0.0.0/0' : '::/0';
}
