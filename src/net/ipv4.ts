/**
 * CIDR arithmetic the plugin needs (subnets, gateways, membership), for both families, on top of the address syntax
 * in addr.ts. (The file keeps its first name; it has covered IPv6 since dual-stack.)
 */
import { formatIp, parseCidr, parseIp } from './addr';

// The family of an address is address syntax (addr.ts); re-exported for the callers that import it from here.
export { familyOf } from './addr';

/** "10.1.2.5/24" → "10.1.2.0/24"; "fd00::5/64" → "fd00::/64". */
export function networkOf(cidr: string): string | undefined {
  const c = parseCidr(cidr);
  return c ? `${formatIp(c.family, c.network)}/${c.prefix}` : undefined;
}

export function contains(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  const a = parseIp(ip);
  return !!c && !!a && a.family === c.family && a.value >= c.network && a.value <= c.last;
}

/** The first usable host address (network + 1): the conventional gateway. */
export function firstHost(cidr: string): string | undefined {
  const c = parseCidr(cidr);
  return c && c.prefix <= (c.family === 4 ? 30 : 126) ? formatIp(c.family, c.network + 1n) : undefined;
}

/** "10.1.2.5/24" → { ip: "10.1.2.5", prefix: 24 }. */
export function splitCidr(cidr: string): { ip: string; prefix: number } | undefined {
  const c = parseCidr(cidr);
  return c ? { ip: formatIp(c.family, c.address), prefix: c.prefix } : undefined;
}

/** The default route's destination for a family (win-bridge's GetDefaultDestinationPrefix, containernetworking/plugins pkg/hns/endpoint_windows.go). */
export function defaultRoute(family: 4 | 6): string {
  return family === 4 ? '0.0.0.0/0' : '::/0';
}
