/**
 * Intents: an ADD's (or a repair's) claim on the objects it is about to create, written before anything is allocated
 * or created and registered node-wide (claims.ts) so that no audit of any state directory misses it. An intent is
 * live while its process runs, before its deadline, and unless a DEL's tombstone voided it (liveness.ts); a live
 * intent of another attempt keeps its owner from a concurrent ADD.
 */
import { AttachmentChangedError, sameAttachment, type CommitOutcome } from './attachments';
import { intentLiveness } from './liveness';
import type { RecordFiles } from './record-files';
import { ownerKey, type AttachmentRecord, type IntentRecord, type Owner } from './records';
import { whyGone } from './tombstones';

/** Another attempt of the same owner is running (a live intent with another id): the new ADD must not take over. */
export class ConcurrentAddError extends Error {
  override readonly name = 'ConcurrentAddError';
  constructor(readonly running: IntentRecord) {
    super(
      `another ADD of ${ownerKey(running)} is running (pid ${running.pid}, since ${new Date(running.createdAt).toISOString()})`,
    );
  }
}

/** Intent ids of ADD attempts running in this process (writeIntent adds, attemptEnded removes). */
const attemptsHere = new Set<string>();

/**
 * Writes this attempt's intent. An intent of another attempt that is still live (its process runs, its deadline
 * has not passed, no DEL voided it) is a concurrent ADD of the same pod: it keeps the owner and this one gets a
 * ConcurrentAddError, rather than both overwriting each other's claims and both failing.
 */
export async function writeIntent(
  f: RecordFiles,
  intent: IntentRecord,
  options: { requireAttachment?: AttachmentRecord },
): Promise<void> {
  f.ensure();
  await f.lock.run(() => {
    // A repair (src/plugin/verbs/repair.ts) claims only while the record it repairs is still there, unchanged: checked
    // under the same lock as the write, so a DEL that dropped the record first is never undone by the repair.
    const required = options.requireAttachment;
    if (required && !sameAttachment(f.read('attachment', intent), required)) throw new AttachmentChangedError();
    const current = f.read('intent', intent);
    // An intent of this very process (a resident service, or an embedder) whose attempt has ended is not a
    // concurrent ADD however alive its pid is: it is what an ADD left for the audit when HNS stopped answering.
    const endedHere = current !== undefined && current.pid === intent.pid && !attemptsHere.has(current.id);
    if (current && current.id !== intent.id && !endedHere) {
      const live = intentLiveness(current, f.read('tombstone', intent), f.now(), f.os.processStartTime);
      if (live.live) throw new ConcurrentAddError(current);
    }
    // Registered node-wide before the intent counts, so no audit of any state directory misses it.
    f.registry?.register(f.dir, intent);
    f.write(intent, 'intent');
    attemptsHere.add(intent.id);
  });
}

/** The ADD attempt that wrote this intent has returned (whatever became of its intent). */
export function attemptEnded(intentId: string): void {
  attemptsHere.delete(intentId);
}

/** Rewrites this attempt's intent (what it plans became known), unless a DEL or another ADD replaced it. */
export async function updateIntent(f: RecordFiles, intent: IntentRecord): Promise<CommitOutcome> {
  f.ensure();
  return f.lock.run(() => {
    const current = f.read('intent', intent);
    if (!current || current.id !== intent.id) return whyGone(f, intent);
    f.registry?.register(f.dir, intent);
    f.write(intent, 'intent-update');
    return 'committed' as const;
  });
}

/** Removes the owner's intent, only if it is still the one with this id (when given). */
export async function removeIntent(f: RecordFiles, owner: Owner, intentId?: string): Promise<boolean> {
  f.ensure();
  return f.lock.run(() => {
    const current = f.read('intent', owner);
    if (!current || (intentId !== undefined && current.id !== intentId)) return false;
    const removed = f.remove('intent', owner, 'intent');
    f.registry?.withdraw(owner, current.id, f.log);
    return removed;
  });
}
