/**
 * Whether an intent still protects what it planned. An intent is live while its process runs (same pid AND same
 * start time, so a recycled pid does not count) and its deadline has not passed, unless a DEL tombstoned the owner
 * after the intent was written.
 */
import type { IntentRecord, TombstoneRecord } from './records';

export interface Liveness {
  live: boolean;
  reason: string;
}

export function intentLiveness(
  intent: IntentRecord,
  tombstone: TombstoneRecord | undefined,
  now: number,
  startTimeOf: (pid: number) => string | null,
): Liveness {
  if (tombstone && tombstone.createdAt >= intent.createdAt) return { live: false, reason: 'voided by a later DEL (tombstone)' };
  if (now >= intent.deadline) return { live: false, reason: 'its deadline has passed' };
  const started = startTimeOf(intent.pid);
  if (started === null) return { live: false, reason: `its process ${intent.pid} is gone` };
  if (intent.pidStartTime !== null && started !== intent.pidStartTime) {
    return { live: false, reason: `pid ${intent.pid} now belongs to another process` };
  }
  return { live: true, reason: `its process ${intent.pid} is still running` };
}
