/**
 * Networks bound to an adapter the host no longer has: by its name (the NIC was removed or renamed), or by the id
 * HNS shows for it — the MAC it bound (v1 SourceMac) — when an adapter of that name is now another NIC. Endpoints on
 * such a network carry nothing. HNS networks that stay bound to an adapter whose NetCfgInstanceId changed at reboot
 * (projectcalico/calico issue 11840, Hyper-V synthetic NICs) are the same trouble under the same name and MAC: that
 * id is in no HNS view this plugin reads, so it is told from what the state directory noted: for the networks we bind
 * ourselves (delegated NIC), the id the ADD recorded (AttachmentRecord.adapter); for any other network (a bridge
 * network, a peer's), the id the node agent first saw its adapter with (state/adapters-seen.ts) — each against the
 * host's adapter of that name now.
 */
import type { NetworkInfo } from '../hns/api';
import { ownerKey } from '../state/records';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

function subject(n: NetworkInfo): string {
  return `network ${n.name} (${n.id})`;
}

const NEXT =
  'hcn-cni networks; restore the adapter, or delete the network (hcn-cni audit removes ours once no pod records it) and let the next ADD create it on the adapter the host has';

export function checkAdapters(s: DoctorSnapshot): Finding[] {
  const byName = byAdapterName(s);
  const byRecord = byRecordedId(s, new Set(byName.map((f) => f.detail!.id as string)));
  const judged = new Set([...byName, ...byRecord].map((f) => f.detail!.id as string));
  return [...byName, ...byRecord, ...bySeenId(s, judged)];
}

type HostAdapters = NonNullable<NonNullable<DoctorSnapshot['hns']>['adapters']>;

/** The host's adapter of that name, when it has another NetCfgInstanceId than the one noted (one rule, two notes). */
function changedAdapter(adapters: HostAdapters, name: string, noted: string): HostAdapters[number] | undefined {
  const now = adapters.find((a) => a.name.toLowerCase() === name.toLowerCase());
  if (!now?.interfaceGuid || now.interfaceGuid.toLowerCase() === noted.toLowerCase()) return undefined;
  return now;
}

/** Networks whose adapter, by the name the node agent first saw it bound to, now has another NetCfgInstanceId. */
function bySeenId(s: DoctorSnapshot, judged: ReadonlySet<string>): Finding[] {
  const adapters = s.hns?.adapters;
  const seen = s.state?.adaptersSeen;
  if (!s.hns || !adapters || !seen) return [];
  const out: Finding[] = [];
  for (const n of s.hns.networks) {
    const was = seen[n.id.toLowerCase()];
    if (!was || judged.has(n.id)) continue;
    const now = changedAdapter(adapters, was.adapterName, was.interfaceGuid);
    if (!now) continue;
    out.push({
      kind: 'network-adapter-changed',
      severity: 'error',
      subject: subject(n),
      why: `it was bound to adapter "${was.adapterName}" as ${was.interfaceGuid} when the node agent first saw it (${new Date(was.since).toISOString()}); that adapter is now ${now.interfaceGuid}: the NIC was replaced or its driver reinstalled, and HNS keeps the network bound to the old one`,
      next: NEXT,
      detail: { id: n.id, adapterName: was.adapterName, seen: was.interfaceGuid, now: now.interfaceGuid },
    });
  }
  return out;
}

/**
 * Our NIC networks whose adapter, by the name the ADD recorded, now has another NetCfgInstanceId: the NIC was
 * replaced or its driver reinstalled (`judged`: networks already found by name or MAC).
 */
function byRecordedId(s: DoctorSnapshot, judged: ReadonlySet<string>): Finding[] {
  const adapters = s.hns?.adapters;
  if (!s.hns || !adapters) return [];
  const networks = new Map(s.hns.networks.map((n) => [n.id.toLowerCase(), n]));
  const out: Finding[] = [];
  for (const r of s.state?.snapshot.attachments ?? []) {
    const was = r.adapter;
    const n = networks.get(r.network.id.toLowerCase());
    if (!was?.interfaceGuid || !n || judged.has(n.id)) continue;
    const now = changedAdapter(adapters, was.name, was.interfaceGuid);
    if (!now) continue;
    out.push({
      kind: 'network-adapter-changed',
      severity: 'error',
      subject: subject(n),
      why: `pod ${ownerKey(r)} bound it to adapter "${was.name}" (${was.mac}) as ${was.interfaceGuid}; that adapter is now ${now.interfaceGuid}${now.mac !== was.mac ? ` (${now.mac})` : ''}: the NIC was replaced or its driver reinstalled, and HNS keeps the network bound to the old one`,
      next: `delete and re-create pod ${ownerKey(r)} (its DEL removes the network, its ADD binds the NIC the host has now); hcn-cni networks`,
      detail: { id: n.id, adapterName: was.name, recorded: was.interfaceGuid, now: now.interfaceGuid },
    });
  }
  return out;
}

function byAdapterName(s: DoctorSnapshot): Finding[] {
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
