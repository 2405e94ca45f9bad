/** CIDR arithmetic the plugin needs (subnets, gateways, membership), on top of the address syntax in addr.ts. */
import { formatIpv4, parseIpv4, parseIpv4Cidr } from './addr';

/** "10.1.2.5/24" → "10.1.2.0/24". */
export function networkOf(cidr: string): string | undefined {
  const c = parseIpv4Cidr(cidr);
  return c ? `${formatIpv4(c.network)}/${c.prefix}` : undefined;
}

export function contains(cidr: string, ip: string): boolean {
  const c = parseIpv4Cidr(cidr);
  const a = parseIpv4(ip);
  return !!c && a !== undefined && a >= c.network && a <= c.last;
}

/** The first usable host address (network + 1): the conventional gateway. */
export function firstHost(cidr: string): string | undefined {
  const c = parseIpv4Cidr(cidr);
  return c && c.prefix <= 30 ? formatIpv4(c.network + 1) : undefined;
}

/** "10.1.2.5/24" → { ip: "10.1.2.5", prefix: 24 }. */
export function splitCidr(cidr: string): { ip: string; prefix: number } | undefined {
  const c = parseIpv4Cidr(cidr);
  return c ? { ip: formatIpv4(c.address), prefix: c.prefix } : undefined;
}
