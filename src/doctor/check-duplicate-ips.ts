/**
 * Two endpoints holding one IP, whatever their owners: a pod given an address another endpoint still holds is
 * unreachable or reaches the wrong pod (the duplicate HNS endpoints of Azure/AKS issue 5653). Which of them is ours,
 * attached, or a live pod's is said, so the stale one can be told from the one in use.
 */
import { canonicalIp } from '../net/addr';
import type { EndpointInfo } from '../hns/api';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';
import { describeEndpoint, recordsByEndpoint } from './whose';

export function checkDuplicateIps(s: DoctorSnapshot): Finding[] {
  if (!s.hns) return [];
  const byIp = new Map<string, EndpointInfo[]>();
  for (const e of s.hns.endpoints) {
    for (const ip of new Set(e.ips.map((x) => canonicalIp(x.address)))) byIp.set(ip, [...(byIp.get(ip) ?? []), e]);
  }
  const records = recordsByEndpoint(s);
  return [...byIp]
    .filter(([, holders]) => holders.length > 1)
    .map(([ip, holders]) => ({
      kind: 'duplicate-ip',
      severity: 'error',
      subject: `address ${ip}`,
      why: `${holders.length} endpoints hold it: ${holders.map((e) => describeEndpoint(s, e, records)).join('; ')}`,
      next: "hcn-cni endpoints, then remove the endpoint no pod uses (hcn-cni audit removes ours; a peer's with its own plugin or Remove-HnsEndpoint)",
      detail: { address: ip, endpoints: holders.map((e) => e.id) },
    }));
}
