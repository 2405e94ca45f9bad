/**
 * Attachment records: what a committed ADD attached (network, endpoint, addresses), one per pod and interface. An
 * ADD prepares its record while HNS attaches (the file is written and fsynced meanwhile) and commits it under the
 * state lock only if its intent is still current; a DEL drops it only if it is still the record the DEL deleted by.
 */
import { prepareWrite, type PreparedWrite } from './atomic';
import { onState, stateIoError } from './io-error';
import { WRITE_DURABILITY, type RecordFiles } from './record-files';
import { ownerKey, type AttachmentRecord, type Owner, type TombstoneRecord } from './records';
import { randomUUID } from 'crypto';
import { dedupe, removeVoidedIntent, whyGone } from './tombstones';

/** An attachment record whose file is being written ahead of its commit (StateStore.prepareAttachment). */
export interface PreparedRecord {
  readonly record: AttachmentRecord;
  readonly write: PreparedWrite;
  /** Removes the record's temp file (after its fsync): an ADD that will not commit awaits it. */
  discard(): Promise<void>;
}

/** superseded: another attempt replaced this one's intent; deleted: a DEL voided it (its tombstone names it). */
export type CommitOutcome = 'committed' | 'superseded' | 'deleted' | 'expired';

/** The record a repair set out to repair, or a DEL deleted by, is no longer the one in the state directory. */
export class AttachmentChangedError extends Error {
  override readonly name = 'AttachmentChangedError';
  constructor() {
    super('the attachment record was deleted or replaced meanwhile');
  }
}

/** The same record: same objects, same repair (a repair changes repairedAt, a new ADD createdAt). */
export function sameAttachment(a: AttachmentRecord | undefined, b: AttachmentRecord): boolean {
  return (
    a !== undefined &&
    a.endpoint.id.toLowerCase() === b.endpoint.id.toLowerCase() &&
    a.createdAt === b.createdAt &&
    a.repairedAt === b.repairedAt
  );
}

/**
 * Starts writing an attachment record before the ADD can commit it: the file is created and written now and its
 * fsync runs while the ADD still waits for HNS (the attach), instead of after. Nothing is visible until
 * commitAttachment(record, intentId, prepared) renames it into place under the lock; an ADD that does not get there
 * calls discard().
 */
export function prepareAttachment(f: RecordFiles, record: AttachmentRecord): PreparedRecord {
  f.ensure();
  const file = f.path('attachment', record);
  const data = JSON.stringify(record, null, 1) + '\n';
  const write = onState(file, 'writing', () =>
    prepareWrite(file, data, 'attachment', f.crash, WRITE_DURABILITY.attachment),
  );
  return { record, write, discard: () => write.discard() };
}

/**
 * Replaces this attempt's intent with the attachment record, unless the attempt was superseded meanwhile: its
 * intent is gone or replaced (a DEL tombstoned it, or another ADD took over), or its deadline passed — checked here,
 * under the lock, because past the deadline an audit may already have judged its objects dead. The record is
 * written before the intent is removed, so at every instant one of them claims the objects. `prepared`: the record
 * as prepareAttachment started writing it (published here, or discarded when the attempt does not commit).
 */
export async function commitAttachment(
  f: RecordFiles,
  record: AttachmentRecord,
  intentId?: string,
  prepared?: PreparedRecord,
): Promise<CommitOutcome> {
  if (prepared && prepared.record !== record) throw new Error('bug: committing another record than the prepared one');
  let published = false;
  try {
    f.ensure();
    if (prepared) {
      const file = prepared.write.file;
      await prepared.write.ready.catch((e: unknown) => {
        throw stateIoError(e, file, 'writing');
      });
    }
    return await f.lock.run(() => {
      if (intentId !== undefined) {
        const current = f.read('intent', record);
        if (!current || current.id !== intentId) return whyGone(f, { ...record, id: intentId });
        if (f.now() >= current.deadline) return 'expired' as const;
        const tomb = f.read('tombstone', record);
        if (tomb?.voids?.includes(current.id)) return 'deleted' as const;
      }
      if (prepared) f.publish(prepared.write, record.kind);
      else f.write(record, 'attachment');
      published = true;
      tidyAfterCommit(f, record, intentId);
      return 'committed' as const;
    });
  } finally {
    if (!published) await prepared?.discard();
  }
}

/**
 * Committed. What follows only tidies: the record supersedes the intent (a leftover one is voided by the pod's DEL,
 * which removes it again) and any older tombstone (a leftover one is kept from releasing the owner's IP while this
 * record exists: pending-ipam.ts), so a file that cannot be removed fails nothing.
 */
function tidyAfterCommit(f: RecordFiles, record: AttachmentRecord, intentId: string | undefined): void {
  f.chore(`removing the intent of ${ownerKey(record)} after its commit`, f.path('intent', record), () =>
    f.remove('intent', record, 'intent', false),
  );
  f.chore(`removing the tombstone of ${ownerKey(record)} after a commit`, f.path('tombstone', record), () =>
    f.remove('tombstone', record, 'tombstone'),
  );
  // Attached now: an audit of another state directory protects it as an endpoint in use.
  if (intentId !== undefined) f.registry?.withdraw(record, intentId, f.log);
}

/**
 * DEL's last step after it deleted by `deleted`: drops the record, unless a repair re-created its objects meanwhile
 * (then the record now there is returned, for the DEL to delete by), and in the same lock voids the owner's intent,
 * if any (a repair under way: its commit then fails and it undoes what it created; the tombstone keeps what it
 * planned for the audit, should it not get to).
 */
export async function removeDeletedAttachment(
  f: RecordFiles,
  deleted: AttachmentRecord,
): Promise<AttachmentRecord | undefined> {
  f.ensure();
  return f.lock.run(() => {
    const current = f.read('attachment', deleted);
    if (current && !sameAttachment(current, deleted)) return current;
    f.remove('attachment', deleted, 'attachment', false);
    const intent = f.read('intent', deleted);
    if (intent) {
      const prior = f.read('tombstone', deleted);
      const tomb: TombstoneRecord = {
        kind: 'tombstone',
        schema: 1,
        containerId: deleted.containerId,
        ifname: deleted.ifname,
        createdAt: f.now(),
        writeId: randomUUID(),
        reason: 'DEL while a repair of the attachment ran',
        planned: dedupe([...(prior?.planned ?? []), ...intent.planned]),
        voids: [...new Set([...(prior?.voids ?? []), intent.id])],
        ...(deleted.cniNetwork ? { cniNetwork: deleted.cniNetwork } : {}),
        ...(prior?.ipamPending ? { ipamPending: true } : {}),
        ...(prior?.heldBy?.length ? { heldBy: prior.heldBy } : {}),
      };
      f.write(tomb, 'tombstone');
      removeVoidedIntent(f, deleted, intent.id);
    }
    return undefined;
  });
}

export async function removeAttachment(f: RecordFiles, owner: Owner): Promise<boolean> {
  f.ensure();
  // Not fsynced: a removal a power cut undoes brings back a record of objects this DEL already deleted (their names
  // carry the dead pod's owner tag, their ids are gone from HNS): it protects nothing, and the pod's next DEL or
  // GC drops it.
  return f.lock.run(() => f.remove('attachment', owner, 'attachment', false));
}
