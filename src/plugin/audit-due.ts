/**
 * When an ADD audits the whole node. Listing every network and endpoint makes an ADD's cost grow with the node's
 * pods (each endpoint is a 1-2 KB JSON object in HNS's answer), so an ADD does it only when nothing else will:
 *  - in the resident service, never: its node agent audits on a timer and right after HNS answers again following
 *    a failure (src/service/node-agent.ts);
 *  - in the standalone executable, when the last whole-node audit from this state directory (by an ADD, GC,
 *    `hcn-cni audit` or a service) is at least auditIntervalSeconds old. Nothing else runs there, so "never" would
 *    leave a leak of another pod for good; "every ADD" is the linear cost. Bounded, a busy node pays for one audit per
 *    interval, and a leak waits at most one interval plus the time to the next ADD — which is also when the NIC or
 *    the address it holds could next be wanted, and every ADD frees those it needs itself (own-objects.ts);
 *  - with auditIntervalSeconds 0, on every ADD (in both modes), as before.
 */
import type { NetConf } from '../cni/types';
import type { StateStore } from '../state/store';
import type { PluginRuntime } from './runtime';

export function wholeNodeAuditDue(
  conf: Pick<NetConf, 'audit' | 'auditIntervalSeconds'>,
  rt: Pick<PluginRuntime, 'backgroundAudit' | 'now'>,
  store: Pick<StateStore, 'lastAudited'>,
): boolean {
  if (!conf.audit) return false;
  if (conf.auditIntervalSeconds === 0) return true;
  if (rt.backgroundAudit) return false;
  const last = store.lastAudited();
  return last === undefined || rt.now() - last >= conf.auditIntervalSeconds * 1000 || rt.now() < last;
}
