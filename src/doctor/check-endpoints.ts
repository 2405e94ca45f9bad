/**
 * Endpoints that carry no pod's traffic, whatever their owner: attached to nothing for longer than a create needs
 * before its attach (endpoints "stuck created, not attached", projectcalico/calico issue 12795; stale endpoints
 * after churn, microsoft/Windows-Containers issue 631), in a namespace HNS no longer has, or in a state of HNS's own
 * that means failed (Degraded, Destroyed). Ours that a pod records are the pod checks' (check-pods.ts), ours that no
 * pod records the audit's (check-audit.ts): each object is reported once.
 */
import { FAILED_STATES } from '../plugin/pod-health';
import { parseOwnedName } from '../orphans/ownership';
import { sameId, type EndpointInfo } from '../hns/api';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';
import { attachedTo, describeEndpoint, endpointSubject, recordsByEndpoint } from './whose';

/** hcsshim hcn/hcnendpoint.go EndpointFlagsRemoteEndpoint: an overlay's endpoint for another node's pod, never attached here. */
const REMOTE_ENDPOINT_FLAG = 1;

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

function notOursToJudge(s: DoctorSnapshot, e: EndpointInfo): boolean {
  return recordsByEndpoint(s).has(e.id.toLowerCase()) || parseOwnedName(e.name) !== undefined;
}

export function checkUnattached(s: DoctorSnapshot): Finding[] {
  if (!s.hns) return [];
  const out: Finding[] = [];
  for (const e of s.hns.endpoints) {
    if (notOursToJudge(s, e) || attachedTo(s, e)) continue;
    if (((s.hns.endpointDocs[e.id.toLowerCase()]?.flags ?? 0) & REMOTE_ENDPOINT_FLAG) !== 0) continue;
    const since = s.unattachedSince?.[e.id.toLowerCase()];
    if (since !== undefined && s.at - since <= s.graceMs) continue;
    const base = { kind: 'endpoint-unattached', subject: endpointSubject(e), detail: { id: e.id } } as const;
    if (since === undefined) {
      out.push({
        ...base,
        severity: 'info',
        why: `${describeEndpoint(s, e, new Map())}: one look cannot tell for how long (the node agent's doctor can)`,
        next: `hcn-cni endpoints; if it stays so, ask its owner (a peer plugin) or remove it with Remove-HnsEndpoint`,
      });
    } else {
      out.push({
        ...base,
        severity: 'warning',
        why: `attached to nothing for ${seconds(s.at - since)} (a create is attached within ${seconds(s.graceMs)}): ${describeEndpoint(s, e, new Map())}`,
        next: `hcn-cni endpoints; ask its owner (a peer plugin) or remove it with Remove-HnsEndpoint`,
      });
    }
  }
  return out;
}

export function checkNamespaceGone(s: DoctorSnapshot): Finding[] {
  const hns = s.hns;
  if (!hns) return [];
  const known = new Set(hns.namespaces.map((n) => n.id.toLowerCase()));
  const records = recordsByEndpoint(s);
  // A pod of ours in the namespace its record names: that pod is gone, which check-pods-gone.ts says once.
  const podGone = (e: EndpointInfo) => sameId(records.get(e.id.toLowerCase())?.attach.target, e.namespaceId!);
  return hns.endpoints
    .filter((e) => e.namespaceId && !known.has(e.namespaceId.toLowerCase()) && !podGone(e))
    .map((e) => ({
      kind: 'endpoint-namespace-gone',
      severity: 'error',
      subject: endpointSubject(e),
      why: `it is in namespace ${e.namespaceId}, which HNS no longer has: ${describeEndpoint(s, e, recordsByEndpoint(s))}`,
      next: 'hcn-cni namespaces; delete the pod (its DEL removes ours) or remove the endpoint with Remove-HnsEndpoint',
      detail: { id: e.id, namespaceId: e.namespaceId },
    }));
}

export function checkFailedEndpoints(s: DoctorSnapshot): Finding[] {
  if (!s.hns) return [];
  const records = recordsByEndpoint(s);
  return s.hns.endpoints.flatMap((e): Finding[] => {
    const state = e.state !== undefined ? FAILED_STATES.get(e.state) : undefined;
    if (!state) return [];
    return [
      {
        kind: 'endpoint-failed',
        severity: 'error',
        subject: endpointSubject(e),
        why: `HNS shows it ${state}: ${describeEndpoint(s, e, records)}`,
        next: records.has(e.id.toLowerCase())
          ? 'hcn-cni service (with "repair": true the node agent re-creates it), or delete the pod'
          : "remove it with its owner's tool or Remove-HnsEndpoint",
        detail: { id: e.id, state: e.state },
      },
    ];
  });
}
