/**
 * Our pods whose sandbox is gone from the node while their record (and often their endpoint) stays: the runtime took
 * the pod away without a DEL reaching hcn-cni (the kubelet restarted mid-teardown, a DEL that failed and was never
 * retried, a namespace removed by hand). What the node can tell without the kubelet is the pod's namespace: containerd
 * creates one HCN namespace per sandbox and removes it only after the CNI DEL succeeded (containerd/containerd
 * pkg/netns/netns_windows.go NewNetNS / Remove; its CRI sandbox_stop.go runs teardownPodNetwork, then
 * sandbox.NetNS.Remove, and returns before the remove when the teardown fails). So a recorded namespace that HNS no
 * longer has means the sandbox is gone; its endpoint and address stay held until something removes the record, and
 * neither the repair (there is no namespace to attach to) nor the audit (the record protects them) does.
 *
 * A container-attached pod (Docker-style hot attach) is judged by its compute system where the host could be asked
 * (snapshot.ts HnsView.computeSystems; recorded-pods.ts sandboxGone): HCS answers HcsOpenComputeSystem with ErrComputeSystemDoesNotExist for a
 * container that no longer exists (microsoft/hcsshim internal/hcs/errors.go, internal/hcs/system.go
 * OpenComputeSystem).
 */
import { ownerKey, type AttachmentRecord } from '../state/records';
import type { Finding } from './finding';
import { recordedPods, sandboxGone } from './recorded-pods';
import type { DoctorSnapshot } from './snapshot';

const NEXT = (r: AttachmentRecord) =>
  `crictl pods --id ${r.containerId} (is the sandbox still on this node?); if not, hcn-cni gc --valid FILE with the sandboxes the runtime has (its DEL removes the endpoint and releases the address)`;

export function checkPodsGone(s: DoctorSnapshot): Finding[] {
  return recordedPods(s).flatMap(({ record, endpoint }): Finding[] => {
    const gone = sandboxGone(s, record);
    if (!gone) return [];
    return [
      {
        kind: 'pod-gone',
        severity: 'warning',
        subject: `pod ${ownerKey(record)}`,
        why: endpoint
          ? `its ${gone} is gone while its endpoint ${endpoint.name} (${endpoint.id}) and its record remain: the sandbox was removed without a DEL reaching hcn-cni`
          : `its ${gone} and its endpoint ${record.endpoint.id} are both gone; only its record (and its address) remain: no DEL reached hcn-cni`,
        next: NEXT(record),
        detail: { endpointId: record.endpoint.id, sandbox: gone, endpointInHns: endpoint !== undefined },
      },
    ];
  });
}
