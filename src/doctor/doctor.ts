/**
 * `hcn-cni doctor` as a plan: gather (gather.ts: one read of HNS, the state and the service, into plain data), then
 * every check over that snapshot (one pure function per family of findings, check-*.ts). The standalone command and
 * the node agent run the same list.
 */
import { checkAdapters } from './check-adapters';
import { checkAudit } from './check-audit';
import { checkDrift } from './check-drift';
import { checkDuplicateIps } from './check-duplicate-ips';
import { checkFailedEndpoints, checkNamespaceGone, checkUnattached } from './check-endpoints';
import { checkHost } from './check-host';
import { checkPods } from './check-pods';
import { checkPodsGone } from './check-pods-gone';
import { checkService } from './check-service';
import { checkState } from './check-state';
import type { Finding } from './finding';
import { gather, type DoctorDeps } from './gather';
import type { DoctorSnapshot } from './snapshot';

export const CHECKS: ReadonlyArray<(s: DoctorSnapshot) => Finding[]> = [
  checkHost,
  checkService,
  checkDuplicateIps,
  checkUnattached,
  checkNamespaceGone,
  checkFailedEndpoints,
  checkAdapters,
  checkPods,
  checkPodsGone,
  checkDrift,
  checkAudit,
  checkState,
];

/** How long an endpoint may stay attached to nothing: the audit's grace for a create in flight (one rule). */
export { graceMs } from '../orphans/audit';

export function diagnose(s: DoctorSnapshot): Finding[] {
  return CHECKS.flatMap((check) => check(s));
}

export async function doctor(deps: DoctorDeps): Promise<{ snapshot: DoctorSnapshot; findings: Finding[] }> {
  const snapshot = await gather(deps);
  return { snapshot, findings: diagnose(snapshot) };
}
