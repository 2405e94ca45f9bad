/**
 * Whether an intent still protects what it planned. An intent is live while its process runs (same pid AND same
 * start time, so a recycled pid does not count) and its deadline has not passed, unless a DEL voided it (its
 * tombstone names the intent's id — ids, not timestamps, so a clock stepping back cannot revive or kill an intent).
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
  if (tombstone?.voids?.includes(intent.id)) return { live: false, reason: 'voided by a DEL (tombstone)' };
  if (now >= intent.deadline) return { live: false, reason: 'its deadline has passed' };
  let started: string | null;
  try {
    started = startTimeOf(intent.pid);
  } catch (e) {
    // Cannot tell (e.g. access denied to a process that took the pid): "dead" would be a guess that deletes.
    return {
      live: true,
      reason: `cannot tell whether process ${intent.pid} is the one that wrote it (${(e as Error).message}); assuming it is`,
    };
  }
  if (started === null) return { live: false, reason: `its process ${intent.pid} is gone` };
  if (intent.pidStartTime !== null && started !== intent.pidStartTime) {
    return { live: false, reason: `pid ${intent.pid} now belongs to another process` };
  }
  return { live: true, reason: `its process ${intent.pid} is still running` };
}

/**
 * Whether the process that wrote an intent still runs (same pid and start time), whatever its deadline says: an ADD
 * hung past its deadline may still commit. Cannot tell (access denied): it may, so it counts as running.
 */
export function processRuns(intent: IntentRecord, startTimeOf: (pid: number) => string | null): boolean {
  try {
    const started = startTimeOf(intent.pid);
    return started !== null && (intent.pidStartTime === null || started === intent.pidStartTime);
  } catch {
    return true;
  }
}
