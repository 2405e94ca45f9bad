/**
 * What a host of the plugin may watch, without the plugin knowing who watches: every HCN call as it ends (through the
 * facade, src/hns/hcn.ts), and every audit's outcome (the whole node's, by the service's node agent, an ADD when due, GC, and an ADD's audit of
 * its own objects). The resident
 * service counts these for its metrics and status (src/service/observability/tally.ts); the standalone executable sets none.
 * Observers are called synchronously and must not throw.
 */
import type { HcnCallObserver } from '../hns/hcn';
import type { AuditReport } from '../orphans/audit';

/** One audit as it ended: the verdicts it gave, and what its sweep deleted (or failed to). */
export interface AuditObservation {
  /** Objects judged, per verdict: foreign, live, in-flight, protected, orphan. */
  verdicts: Readonly<Record<string, number>>;
  /** Kinds of the objects deleted, one entry each ('network', 'endpoint'). */
  removed: ReadonlyArray<'network' | 'endpoint'>;
  /** Objects the sweep failed to delete. */
  failed: number;
  /** Housekeeping chores of the audit that failed (state/housekeeping.ts: noted, retried by the next audit). */
  housekeepingFailed: number;
}

export interface RuntimeObserver {
  hcnCall?: HcnCallObserver;
  audit?(observation: AuditObservation): void;
}

export function auditObservation(
  report: Pick<AuditReport, 'counts' | 'sweep'> & Partial<Pick<AuditReport, 'housekeeping'>>,
): AuditObservation {
  return {
    verdicts: { ...report.counts },
    removed: (report.sweep?.deleted ?? []).map((j) => j.kind),
    failed: report.sweep?.failed.length ?? 0,
    housekeepingFailed: report.housekeeping?.failed ?? 0,
  };
}
