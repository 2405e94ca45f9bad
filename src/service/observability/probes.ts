/**
 * What the DaemonSet's probes ask of the service (`hcn-cni service --probe liveness|readiness`, an exec probe).
 *  - liveness: the service answered its status on the socket or pipe the shims use. Nothing about HNS: restarting
 *    the service does not bring HNS back, and while the service is away the shims run the standalone executable, so
 *    a liveness failure over HNS would only add restarts.
 *  - readiness: it answered, it still accepts (below the abandoned-call bound, abandoned-bound.ts), and HNS answers
 *    (no call has gone unanswered since the last one HNS answered: the service's tracker, hns-health.ts, as the node
 *    agent's status shows it); and, when the probe knows its pod (`ownPod`, HCN_CNI_POD_UID), the service that
 *    answered runs in that pod. Both pods of a DaemonSet update probe the same address: once the new pod's service
 *    has taken it over (hand-over.ts), the old pod is not ready, and the new one is not ready until it has. Liveness
 *    stays unconditional: the old pod's service, handed over, stays alive until the pod is deleted
 *    (`serve --stay-after-hand-over`) rather than be restarted.
 * Pure: the status in, the verdict and its one-line reason out.
 */
import type { ServiceStatus } from '../service';

export type Probe = 'liveness' | 'readiness';

export interface ProbeVerdict {
  ok: boolean;
  reason: string;
}

export function judgeProbe(probe: Probe, s: ServiceStatus, ownPod?: string): ProbeVerdict {
  const serving = `serving at ${s.address} (pid ${s.pid})`;
  if (probe === 'liveness') return { ok: true, reason: serving };
  if (ownPod && s.pod !== ownPod)
    return {
      ok: false,
      reason: `the service at ${s.address} (pid ${s.pid}) is ${s.pod ? `pod ${s.pod}'s` : 'not one of a pod'}, not this pod's (${ownPod})`,
    };
  const a = s.abandoned as ServiceStatus['abandoned'] | undefined;
  if (a && a.count >= a.bound)
    return { ok: false, reason: `not accepting: ${a.count} abandoned HCN calls reached the bound ${a.bound}` };
  const failing = (s.agent as ServiceStatus['agent'] | undefined)?.hnsFailingSince;
  if (failing) return { ok: false, reason: `HNS has not answered since ${failing}` };
  return { ok: true, reason: `${serving}, accepting, HNS answering` };
}
