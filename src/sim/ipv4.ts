/**
 * IPv4 arithmetic for subnets and endpoint address allocation. IPv6 prefixes are accepted on networks (and shown
 * back) but never allocated from: the plugin's pods are IPv4, and HNS dual-stack is out of the simulator's scope.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function ipToInt(ip: string): number | undefined {
  if (!isIPv4(ip)) return undefined;
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export interface Cidr {
  /** Text as given (HNS shows prefixes back as they were configured). */
  text: string;
  family: 4 | 6;
  bits: number;
  /** IPv4 only: first and last address of the range. */
  first: number;
  last: number;
}

/** Parses "a.b.c.d/n" (or an IPv6 prefix); undefined when malformed. */
export function parseCidr(text: unknown): Cidr | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const bits = Number(m[2]);
  if (isIPv6(m[1])) return bits <= 128 ? { text, family: 6, bits, first: 0, last: 0 } : undefined;
  const base = ipToInt(m[1]);
  if (base === undefined || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const first = Math.floor(base / size) * size;
  return { text, family: 4, bits, first, last: first + size - 1 };
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipToInt(ip);
  return c.family === 4 && n !== undefined && n >= c.first && n <= c.last;
}

/** Network and broadcast addresses are not assignable, except in /31 and /32 where every address is. */
export function isNetworkOrBroadcast(c: Cidr, ip: string): boolean {
  const n = ipToInt(ip);
  return c.family === 4 && c.bits < 31 && (n === c.first || n === c.last);
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === 4 && b.family === 4 && a.first <= b.last && b.first <= a.last;
}

/** An IP address or an address prefix: what policy fields such as Exceptions or DestinationPrefix hold. */
export function isIpOrCidr(s: unknown): boolean {
  return typeof s === 'string' && (isIPv4(s) || isIPv6(s) || parseCidr(s) !== undefined);
}
