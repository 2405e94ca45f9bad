/**
 * The state directory's own troubles: records it could not read (quarantined: they protect their owner's objects
 * from the audit until an operator looks), housekeeping the audits keep failing, and addresses kept for a tombstone
 * (a DEL that could not remove its endpoint keeps the IP allocated until the audit has; held by a peer's endpoint,
 * it stays until that one goes).
 */
import { ownerKey } from '../state/records';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

export function checkState(s: DoctorSnapshot): Finding[] {
  if (!s.state) return [];
  const { snapshot, housekeeping } = s.state;
  const quarantined: Finding[] = snapshot.quarantined
    .filter((q) => !q.newer)
    .map((q) => ({
      kind: 'record-quarantined',
      severity: 'warning',
      subject: `${q.kind} record ${q.owner ? ownerKey(q.owner) : q.key}`,
      why: `unreadable (${q.reason}); it protects its owner's HNS objects from the audit`,
      next: 'hcn-cni state; once dealt with, hcn-cni state --clear-quarantine',
      detail: { file: q.file, reason: q.reason },
    }));
  const chores: Finding[] = housekeeping.map((c) => ({
    kind: 'housekeeping-failed',
    severity: 'warning',
    subject: `${c.what} ${c.file}`,
    why: `the audits failed ${c.failures} time(s) to do it: ${c.error}`,
    next: "hcn-cni state (housekeeping overdue); check the file's permissions and what holds it open",
    detail: { file: c.file, failures: c.failures, error: c.error },
  }));
  const kept: Finding[] = snapshot.tombstones
    .filter((t) => t.ipamPending)
    .map((t) => ({
      kind: 'address-kept',
      severity: t.heldBy?.length ? 'warning' : 'info',
      subject: `pod ${ownerKey(t)}`,
      why: t.heldBy?.length
        ? `its address stays allocated while another endpoint holds it: ${t.heldBy.map((h) => `${h.name} (${h.id}) holds ${h.address}`).join(', ')}`
        : `its address stays allocated until the audit has removed its endpoint (${t.reason})`,
      next: t.heldBy?.length ? "hcn-cni endpoints; remove the stale holder with its owner's tool" : 'hcn-cni audit',
      detail: { reason: t.reason, ...(t.heldBy?.length ? { heldBy: t.heldBy } : {}) },
    }));
  return [...quarantined, ...chores, ...kept];
}
