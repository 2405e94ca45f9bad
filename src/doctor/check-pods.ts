/**
 * Our pods judged by what they need, as the node agent's health check does (plugin/pod-health.ts), from the snapshot
 * alone: the recorded endpoint is in HNS and attached as recorded (that namespace; that container). An endpoint HNS
 * shows failed is the endpoint check's (check-endpoints.ts), a pod whose sandbox is gone the gone-pod check's
 * (check-pods-gone.ts), so each is reported once.
 */
import { sameId } from '../hns/api';
import { FAILED_STATES } from '../plugin/pod-health';
import { ownerKey, type AttachmentRecord } from '../state/records';
import { livePods } from './recorded-pods';
import type { EndpointInfo } from '../hns/api';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

const REPAIR =
  'hcn-cni service (a network with "repair": true is repaired by the node agent), or delete and re-create the pod';

/** Why the endpoint is not attached as recorded, or undefined when it is (or the view cannot tell). */
function notAttached(s: DoctorSnapshot, r: AttachmentRecord, e: EndpointInfo): string | undefined {
  const { kind, target } = r.attach;
  if (kind === 'none') return undefined;
  if (kind === 'container') {
    if (e.containers === undefined) return undefined; // the v2 view does not show containers
    return e.containers.some((c) => c.toLowerCase() === target.toLowerCase())
      ? undefined
      : `its endpoint is not attached to container ${target}`;
  }
  const ns = s.hns!.namespaces.find((n) => sameId(n.id, target));
  if (!ns) return undefined; // its sandbox is gone: check-pods-gone.ts
  if (e.namespaceId ? sameId(e.namespaceId, target) : ns.endpoints.some((id) => sameId(id, e.id))) return undefined;
  return `its endpoint is not in namespace ${target}`;
}

export function checkPods(s: DoctorSnapshot): Finding[] {
  if (!s.hns) return [];
  return livePods(s).flatMap(({ record, endpoint }): Finding[] => {
    const subject = `pod ${ownerKey(record)}`;
    if (!endpoint) {
      return [
        {
          kind: 'pod-endpoint-missing',
          severity: 'error',
          subject,
          why: `its endpoint ${record.endpoint.name} (${record.endpoint.id}) is not in HNS (an HNS restart drops endpoints)`,
          next: REPAIR,
          detail: { endpointId: record.endpoint.id },
        },
      ];
    }
    if (endpoint.state !== undefined && FAILED_STATES.has(endpoint.state)) return [];
    const why = notAttached(s, record, endpoint);
    if (!why) return [];
    return [
      { kind: 'pod-not-attached', severity: 'error', subject, why, next: REPAIR, detail: { endpointId: endpoint.id } },
    ];
  });
}
