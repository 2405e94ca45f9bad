/**
 * Networks bound to an adapter the host no longer has: by its name (the NIC was removed or renamed), or by the id
 * HNS shows for it — the MAC it bound (v1 SourceMac) — when an adapter of that name is now another NIC. Endpoints on
 * such a network carry nothing. HNS networks that stay bound to an adapter whose NetCfgInstanceId changed at reboot
 * (projectcalico/calico issue 11840, Hyper-V synthetic NICs) are the same trouble; that id is in no HNS view this
 * plugin reads, so a NIC that keeps its name and MAC while its NetCfgInstanceId changes is not seen here.
 */
import type { NetworkInfo } from '../hns/api';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

function subject(n: NetworkInfo): string {
  return `network ${n.name} (${n.id})`;
}

const NEXT =
  'hcn-cni networks; restore the adapter, or delete the network (hcn-cni audit removes ours once no pod records it) and let the next ADD create it on the adapter the host has';

export function checkAdapters(s: DoctorSnapshot): Finding[] {
  const adapters = s.hns?.adapters;
  if (!s.hns || !adapters) return [];
  const out: Finding[] = [];
  for (const n of s.hns.networks) {
    if (!n.adapterName && !n.sourceMac) continue;
    const byName = n.adapterName
      ? adapters.find((a) => a.name.toLowerCase() === n.adapterName!.toLowerCase())
      : undefined;
    const byMac = n.sourceMac ? adapters.find((a) => a.mac === n.sourceMac) : undefined;
    if (n.adapterName && !byName && !byMac) {
      out.push({
        kind: 'network-adapter-missing',
        severity: 'error',
        subject: subject(n),
        why: `it is bound to adapter "${n.adapterName}"${n.sourceMac ? ` (${n.sourceMac})` : ''}, which the host no longer has (adapters: ${adapters.map((a) => a.name).join(', ') || 'none'})`,
        next: NEXT,
        detail: { id: n.id, adapterName: n.adapterName, sourceMac: n.sourceMac },
      });
    } else if (n.sourceMac && byName && byName.mac !== n.sourceMac) {
      out.push({
        kind: 'network-adapter-changed',
        severity: 'error',
        subject: subject(n),
        why: `it is bound to adapter "${n.adapterName}" as ${n.sourceMac}, but that adapter is now ${byName.mac}${byMac ? ` and ${n.sourceMac} is "${byMac.name}"` : ''}`,
        next: NEXT,
        detail: { id: n.id, adapterName: n.adapterName, sourceMac: n.sourceMac, adapterMac: byName.mac },
      });
    } else if (!n.adapterName && !byMac) {
      out.push({
        kind: 'network-adapter-missing',
        severity: 'error',
        subject: subject(n),
        why: `it is bound to the adapter with MAC ${n.sourceMac}, which the host no longer has`,
        next: NEXT,
        detail: { id: n.id, sourceMac: n.sourceMac },
      });
    }
  }
  return out;
}
