/**
 * Our pods whose endpoint no longer is what the record says HNS was given (AttachmentRecord.recreate): its
 * addresses, MAC, DNS servers, search list and domain, and its policies. HNS adds fields and policies of its own, so
 * only what was given is looked for; a policy the plugin gave that HNS no longer shows is drift — an HNS crash that
 * purges policies (Azure/aks-engine pull 4975, its hnsremediator) leaves the pod without its NAT or ACLs.
 */
import { canonicalIp } from '../net/addr';
import { normalizeMac } from '../net/mac';
import type { EndpointInfo, EndpointSpec } from '../hns/api';
import { toFlat, toTyped } from '../hns/policies';
import type { TypedPolicy } from '../hns/schema';
import { ownerKey } from '../state/records';
import type { Finding } from './finding';
import type { DoctorSnapshot, EndpointDoc } from './snapshot';
import { livePods } from './recorded-pods';

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x.toLowerCase() === b[i]!.toLowerCase());
}

function shown(list: readonly string[]): string {
  return list.length ? list.join(',') : 'none';
}

/** Whether `live` holds every setting of `given` (keys compared case-insensitively, as HNS reads them). */
function holds(live: unknown, given: unknown): boolean {
  if (given === null || typeof given !== 'object') {
    return typeof given === 'string' && typeof live === 'string'
      ? given.toLowerCase() === live.toLowerCase()
      : given === live;
  }
  if (Array.isArray(given))
    return Array.isArray(live) && given.length === live.length && given.every((g, i) => holds(live[i], g));
  if (live === null || typeof live !== 'object') return false;
  const liveKeys = new Map(Object.entries(live).map(([k, v]) => [k.toLowerCase(), v]));
  return Object.entries(given).every(([k, v]) => v === undefined || holds(liveKeys.get(k.toLowerCase()), v));
}

/**
 * A policy the plugin gave as a v1 view shows it: rendered flat and read back with the plugin's one mapping
 * (hns/policies.ts), so a setting of HCN's alone is not looked for where v1 cannot show it; undefined for a type that
 * exists only in HCN (nothing to look for in that view).
 */
function asV1Shows(p: TypedPolicy): TypedPolicy | undefined {
  try {
    return toTyped(toFlat(p));
  } catch {
    return undefined;
  }
}

function missingPolicies(given: readonly TypedPolicy[], doc: EndpointDoc & { policies: TypedPolicy[] }): string[] {
  const live = doc.policies;
  const looked = doc.policiesView === 1 ? given.flatMap((g) => asV1Shows(g) ?? []) : given;
  return looked
    .filter(
      (g) =>
        !live.some((l) => l.Type.toLowerCase() === g.Type.toLowerCase() && holds(l.Settings ?? {}, g.Settings ?? {})),
    )
    .map((g) => g.Type);
}

function dnsDrift(spec: EndpointSpec, doc: EndpointDoc): string[] {
  const out: string[] = [];
  const d = doc.dns;
  if (!sameList(d.servers, spec.dns.servers))
    out.push(`DNS servers ${shown(d.servers)}, recorded ${shown(spec.dns.servers)}`);
  if (!sameList(d.search ?? [], spec.dns.search))
    out.push(`DNS search ${shown(d.search ?? [])}, recorded ${shown(spec.dns.search)}`);
  if ((d.domain ?? '').toLowerCase() !== (spec.dns.domain ?? '').toLowerCase())
    out.push(`DNS domain ${d.domain || 'none'}, recorded ${spec.dns.domain || 'none'}`);
  return out;
}

/** How the endpoint differs from the recorded spec, one phrase per field. */
export function driftOf(spec: EndpointSpec, e: EndpointInfo, doc: EndpointDoc | undefined): string[] {
  const out: string[] = [];
  const ips = (l: ReadonlyArray<{ address: string }>) => l.map((x) => canonicalIp(x.address)).sort();
  if (!sameList(ips(e.ips), ips(spec.ips)))
    out.push(`addresses ${shown(ips(e.ips))}, recorded ${shown(ips(spec.ips))}`);
  const mac = normalizeMac(spec.mac);
  if (mac && e.mac && mac !== e.mac) out.push(`MAC ${e.mac}, recorded ${mac}`);
  if (doc) out.push(...dnsDrift(spec, doc));
  if (doc?.policies) {
    const missing = missingPolicies(spec.policies ?? [], { ...doc, policies: doc.policies });
    if (missing.length) out.push(`policies missing: ${missing.join(', ')}`);
  }
  return out;
}

export function checkDrift(s: DoctorSnapshot): Finding[] {
  if (!s.hns) return [];
  return livePods(s).flatMap(({ record, endpoint }): Finding[] => {
    const spec = record.recreate?.endpoint as EndpointSpec | undefined;
    if (!endpoint || !spec) return [];
    const drift = driftOf(spec, endpoint, s.hns!.endpointDocs[endpoint.id.toLowerCase()]);
    if (drift.length === 0) return [];
    return [
      {
        kind: 'pod-drift',
        severity: 'error',
        subject: `pod ${ownerKey(record)}`,
        why: `its endpoint ${endpoint.name} differs from its record: ${drift.join('; ')}`,
        next: 'delete and re-create the pod (its ADD gives HNS the endpoint again); hcn-cni endpoints --json shows what HNS has',
        detail: { endpointId: endpoint.id, drift },
      },
    ];
  });
}
