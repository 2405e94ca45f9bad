/**
 * When the whole node is audited: the one "is an audit due" rule, for every asker — an ADD (standalone or through the
 * service) and the service's node agent (src/service/agent/node-agent.ts), for its audits and for the visits of a directory
 * served with `"audit": false` and `"repair": true`.
 *
 * Listing every network and endpoint makes an ADD's cost grow with the node's pods (each endpoint is a 1-2 KB JSON
 * object in HNS's answer), so an ADD does it only when nothing else will:
 *  - in the resident service, never: its node agent audits on a timer and right after HNS answers again following
 *    a failure;
 *  - in the standalone executable, when the last whole-node audit from this state directory (by an ADD, GC,
 *    `hcn-cni audit` or a service) is at least auditIntervalSeconds old. Nothing else runs there, so "never" would
 *    leave a leak of another pod for good; "every ADD" is the linear cost. Bounded, a busy node pays for one audit per
 *    interval, and a leak waits at most one interval plus the time to the next ADD — which is also when the NIC or
 *    the address it holds could next be wanted, and every ADD frees those it needs itself (own-objects.ts).
 *
 * auditIntervalSeconds 0 means what docs/configuration.md promises, decided here once: every ADD audits the whole
 * node, in both modes. A timer has no ADD to follow, so the node agent keeps auditing a quiet node on the key's
 * default interval (EVERY_ADD_TIMER_S) rather than on every tick.
 */
import type { NetConf } from '../cni/types';
import type { StateStore } from '../state/store';

/** The node agent's interval for a configuration whose own is 0 ("every ADD"): the key's default. */
export const EVERY_ADD_TIMER_S = 60;

type IntervalConf = Pick<NetConf, 'auditIntervalSeconds'>;

/** Who asks: an ADD (in the standalone executable, or in the service: `backgroundAudit`), or the node agent's timer. */
export type AuditAsker = { by: 'add'; backgroundAudit: boolean } | { by: 'timer' };

/**
 * The rule. `last` says when the previous audit (or visit) began, on the same clock as `now` (asked only when it
 * matters: for an ADD it is a file read). A `last` in the future is what a wall clock stepped back leaves, and counts
 * as due: a step may cost an audit, never postpone them until the clock catches up. Of several configurations (one
 * state directory), the shortest interval decides.
 */
export function auditDue(
  asker: AuditAsker,
  confs: readonly IntervalConf[],
  last: () => number | undefined,
  now: number,
): boolean {
  const everyAdd = confs.some((c) => c.auditIntervalSeconds === 0);
  if (asker.by === 'add') {
    if (everyAdd) return true;
    if (asker.backgroundAudit) return false;
  }
  const seconds = Math.min(...confs.map((c) => c.auditIntervalSeconds || EVERY_ADD_TIMER_S));
  const at = last();
  return at === undefined || now - at >= seconds * 1000 || now < at;
}

/** Whether this ADD audits the whole node (else only its own names: own-objects.ts). */
export function wholeNodeAuditDue(
  conf: Pick<NetConf, 'audit' | 'auditIntervalSeconds'>,
  deps: { readonly backgroundAudit: boolean; readonly now: () => number },
  store: Pick<StateStore, 'lastAudited'>,
): boolean {
  if (!conf.audit) return false;
  return auditDue({ by: 'add', backgroundAudit: deps.backgroundAudit }, [conf], () => store.lastAudited(), deps.now());
}
