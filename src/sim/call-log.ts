/**
 * What the simulator counts and remembers of calls: a count per operation (stats) and the log of the last
 * CALL_LOG_LIMIT calls (calls), each with its HRESULT and the disturbances it met.
 */
import type { SimCallRecord, SimOp } from './control-types';

const CALL_LOG_LIMIT = 10_000;

export class CallLog {
  private callCounts: Record<SimOp, number> = {};
  private callLog: SimCallRecord[] = [];

  count(op: SimOp): void {
    this.callCounts[op] = (this.callCounts[op] ?? 0) + 1;
  }

  record(r: SimCallRecord): void {
    if (r.fault === undefined) delete r.fault;
    if (r.id === undefined) delete r.id;
    this.callLog.push(r);
    if (this.callLog.length > CALL_LOG_LIMIT) this.callLog.splice(0, this.callLog.length - CALL_LOG_LIMIT);
  }

  counts(): Record<SimOp, number> {
    return { ...this.callCounts };
  }

  calls(): SimCallRecord[] {
    return this.callLog.map((r) => ({ ...r }));
  }

  reset(): void {
    this.callCounts = {};
    this.callLog = [];
  }
}
