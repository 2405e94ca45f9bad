/**
 * Back-off for the pods repair cannot fix. A pod whose repair HNS refuses (its address taken by another pod since the
 * restart, its NIC bound by another network) or that cannot be repaired at all (its namespace or container gone, no
 * recorded spec) used to be tried again on every pass of the node agent for as long as its record lasted: one soak
 * counted 2 837 refusals. Now each failure doubles the passes of its network the pod sits out (1, 2, 4, … up to
 * MAX_SKIPPED), so a pod that never heals costs one attempt in MAX_SKIPPED + 1 passes, and one that becomes
 * repairable waits at most that long. It starts from nothing when its record changes (a new ADD of the pod, a repair
 * that succeeded) or it is healthy again. HNS not answering (hns-unreachable) or a DEL meanwhile (deleted-meanwhile)
 * is not the pod's failure: no back-off.
 *
 * Only the repair waits: the health check still judges and names the pod on every pass (the status, the metrics,
 * STATUS), with its back-off beside it in the status.
 */
import type { PodVerdict } from '../../plugin/pod-health';
import type { PodRepair, RepairOutcome } from '../../plugin/verbs/repair';
import { ownerKey, type AttachmentRecord } from '../../state/records';

/** Passes sat out after many failures, at most: with the default interval (60 s), about a quarter of an hour. */
export const MAX_SKIPPED = 16;

/** The outcomes that say something of the pod, not of HNS's availability or of a DEL: they back off. */
const BACKS_OFF: ReadonlySet<RepairOutcome> = new Set<RepairOutcome>([
  'namespace-gone',
  'container-gone',
  'network-gone',
  'no-recorded-spec',
  'attached-elsewhere',
  'hns-refused',
  'hns-failed',
]);

/** A pod's back-off, as the status shows it. */
export interface Backoff {
  /** Failed repairs in a row. */
  failures: number;
  /** Passes of its network still to sit out before the next attempt. */
  passesLeft: number;
  lastOutcome: RepairOutcome;
}

interface Entry extends Backoff {
  /** The record the failures were about (recordStamp): another record is another pod's attempt. */
  stamp: string;
}

/** What identifies one version of a record: the same objects, the same ADD, the same repair. */
function recordStamp(r: AttachmentRecord): string {
  return `${r.endpoint.id.toLowerCase()}|${r.createdAt}|${r.repairedAt ?? ''}`;
}

export class RepairBackoff {
  /** Per network (state directory and name), per pod (ownerKey). */
  private readonly networks = new Map<string, Map<string, Entry>>();

  /**
   * One pass of a network: its unhealthy pods whose repair is due now. The others sit out this pass; back-offs of pods
   * that are healthy again, gone, or recorded anew are forgotten.
   */
  admit(network: string, unhealthy: readonly PodVerdict[]): PodVerdict[] {
    const before = this.networks.get(network) ?? new Map<string, Entry>();
    const kept = new Map<string, Entry>();
    const due: PodVerdict[] = [];
    for (const v of unhealthy) {
      const key = ownerKey(v.record);
      const e = before.get(key);
      if (e && e.stamp === recordStamp(v.record) && e.passesLeft > 0) {
        kept.set(key, { ...e, passesLeft: e.passesLeft - 1 });
        continue;
      }
      if (e && e.stamp === recordStamp(v.record)) kept.set(key, e);
      due.push(v);
    }
    this.networks.set(network, kept);
    return due;
  }

  /** What the repairs of a pass ended as: a failure of the pod's own doubles its back-off, a success forgets it. */
  note(network: string, attempted: readonly PodVerdict[], reports: readonly PodRepair[]): void {
    const entries = this.networks.get(network) ?? new Map<string, Entry>();
    this.networks.set(network, entries);
    for (const r of reports) {
      const v = attempted.find((a) => ownerKey(a.record) === r.attachment);
      if (!v || r.outcome === 'repaired') {
        entries.delete(r.attachment);
        continue;
      }
      if (!BACKS_OFF.has(r.outcome)) continue;
      const failures = (entries.get(r.attachment)?.failures ?? 0) + 1;
      const passesLeft = Math.min(2 ** (failures - 1), MAX_SKIPPED);
      entries.set(r.attachment, { failures, passesLeft, lastOutcome: r.outcome, stamp: recordStamp(v.record) });
    }
  }

  /** A pod's back-off, if it has one. */
  of(network: string, attachment: string): Backoff | undefined {
    const e = this.networks.get(network)?.get(attachment);
    return e && { failures: e.failures, passesLeft: e.passesLeft, lastOutcome: e.lastOutcome };
  }
}
