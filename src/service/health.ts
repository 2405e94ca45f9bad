/**
 * What the DaemonSet's probes ask of the service (`hcn-cni service --probe liveness|readiness`, an exec probe).
 *  - liveness: the service answered its status on the socket or pipe the shims use. Nothing about HNS: restarting
 *    the service does not bring HNS back, and while the service is away the shims run the standalone executable, so
 *    a liveness failure over HNS would only add restarts.
 *  - readiness: it answered, it still accepts (below the abandoned-call bound, abandoned-bound.ts), and HNS answers
 *    (no call has gone unanswered since the last one HNS answered: the service's tracker, hns-health.ts, as the node
 *    agent's status shows it).
 * Pure: the status in, the verdict and its one-line reason out.
 */
import type { ServiceStatus } from './service';

export type Probe = 'liveness' | 'readiness';

export interface ProbeVerdict {
  ok: boolean;
  reason: string;
}

export function judgeProbe(probe: Probe, s: ServiceStatus): ProbeVerdict {
  const serving = `serving at ${s.address} (pid ${s.pid})`;
  if (probe === 'liveness') return { ok: true, reason: serving };
  const a = s.abandoned as ServiceStatus['abandoned'] | undefined;
  if (a && a.count >= a.bound)
    return { ok: false, reason: `not accepting: ${a.count} abandoned HCN calls reached the bound ${a.bound}` };
  const failing = (s.agent as ServiceStatus['agent'] | undefined)?.hnsFailingSince;
  if (failing) return { ok: false, reason: `HNS has not answered since ${failing}` };
  return { ok: true, reason: `${serving}, accepting, HNS answering` };
}
