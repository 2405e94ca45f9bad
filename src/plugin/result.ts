/** The CNI result of an attachment, from what HNS and IPAM gave it. */
import type { CniResult, Dns, IpConfig, Route } from '../cni/types';

export function cniMac(mac: string | undefined): string | undefined {
  return mac ? mac.toLowerCase().replace(/-/g, ':') : undefined;
}

export interface ResultParts {
  ifname: string;
  netns: string;
  mac: string | undefined;
  ips: IpConfig[];
  routes: Route[];
  dns: Dns;
  mtu?: number;
}

export function buildResult(p: ResultParts): CniResult {
  const iface: CniResult['interfaces'][number] = { name: p.ifname, sandbox: p.netns };
  const mac = cniMac(p.mac);
  if (mac) iface.mac = mac;
  if (p.mtu !== undefined) iface.mtu = p.mtu;
  const dns: Dns = {};
  if (p.dns.nameservers?.length) dns.nameservers = p.dns.nameservers;
  if (p.dns.domain) dns.domain = p.dns.domain;
  if (p.dns.search?.length) dns.search = p.dns.search;
  if (p.dns.options?.length) dns.options = p.dns.options;
  return { interfaces: [iface], ips: p.ips.map((ip) => ({ ...ip, interface: 0 })), routes: p.routes, dns };
}
