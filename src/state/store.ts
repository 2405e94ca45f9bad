/**
 * The state store: one file per owner and kind under <stateDir>/{attachments,intents,tombstones}/<key>.json, where
 * <key> is `<cid>@<ifname>` or, when that is too long or has upper case, a hashed form (file-names.ts).
 * One file per attachment means one unreadable file costs one pod, never the node (Azure CNI keeps every pod in one
 * file; when it is corrupt every ADD and DEL fails). Unreadable files — and anything at a record's path that is not
 * a small regular file (a directory, a FIFO, a symlink) — are moved to quarantine/ and reported; what cannot be moved
 * is skipped with a warning and still protects its owner's objects. File-system failures are StateIoErrors that
 * name the path and what is wrong with it. A removal that only tidies (housekeeping.ts) never fails a verb: it is
 * noted and retried later. A record that cannot be deleted is set aside under a temp name (which readers skip), so a
 * removal a verb depends on fails only when the file can be neither deleted nor renamed.
 *
 * Reads take no lock (files are replaced atomically). Writes that depend on what is there (commit an attachment
 * only if this attempt's intent is still current, and no newer tombstone voids it) run under the state lock, which
 * is held for file operations only.
 *
 * This is the front: each kind's rules live in a file of their own — attachments.ts, intents.ts, tombstones.ts,
 * snapshots.ts (what the state claims), housekeeping.ts and quarantine.ts — over record-files.ts, the files they share.
 */
import * as attachments from './attachments';
import type { CommitOutcome, PreparedRecord } from './attachments';
import type { Claim } from './claims';
import { readAdaptersSeen, writeAdaptersSeen, type AdaptersSeen } from './adapters-seen';
import { deleteNoted, lastAudited, markAudited, notedChores, noteChores } from './housekeeping';
import type { FailedChore, NotedChore } from './housekeeping';
import * as intents from './intents';
import type { QuarantinedFile } from './quarantine';
import { RecordFiles, type StoreOptions } from './record-files';
import type { AttachmentRecord, IntentRecord, Owner, RecordKind, TombstoneRecord } from './records';
import * as snapshots from './snapshots';
import type { StateSnapshot } from './snapshots';
import * as tombstones from './tombstones';
import type { TombstoneOptions } from './tombstones';

export { AttachmentChangedError, type CommitOutcome, type PreparedRecord } from './attachments';
export { ConcurrentAddError } from './intents';
export type { QuarantinedFile } from './quarantine';
export { countRecordFiles, type StoreOptions, type StoreWarn } from './record-files';
export type { StateSnapshot } from './snapshots';

export class StateStore {
  private readonly files: RecordFiles;

  constructor(
    dir: string,
    private readonly options: StoreOptions,
  ) {
    this.files = new RecordFiles(dir, options);
  }

  get dir(): string {
    return this.files.dir;
  }

  /** Creates the directories (0700) on first use; then costs nothing. */
  ensure(): void {
    this.files.ensure();
  }

  // ---- reads ----

  getAttachment(owner: Owner): AttachmentRecord | undefined {
    return this.files.read('attachment', owner);
  }
  getIntent(owner: Owner): IntentRecord | undefined {
    return this.files.read('intent', owner);
  }
  getTombstone(owner: Owner): TombstoneRecord | undefined {
    return this.files.read('tombstone', owner);
  }

  /** Everything on disk (unreadable files are quarantined on the way), and other state directories' claims. */
  snapshot(): StateSnapshot {
    return snapshots.snapshot(this.files);
  }

  /** The tombstones only (an ADD checks them for kept IPs without reading every record). */
  tombstones(): TombstoneRecord[] {
    this.files.ensure();
    return this.files.readAll('tombstone');
  }

  /** One owner's records, quarantined files and other directories' claims on it (snapshots.ts). */
  ownerSnapshot(owner: Owner, exceptIntent?: string): StateSnapshot {
    return snapshots.ownerSnapshot(this.files, owner, exceptIntent);
  }

  /** Live claims of other state directories on this node (all, or an owner's). */
  otherClaims(owner?: Owner): Claim[] {
    return snapshots.otherClaims(this.files, owner);
  }

  quarantined(): QuarantinedFile[] {
    return snapshots.quarantined(this.files);
  }

  /** Another state directory of this node, with this store's clock, OS helpers, log and claims register. */
  sibling(dir: string): StateStore {
    const o = this.options;
    return new StateStore(dir, {
      os: o.os,
      now: this.files.now,
      ...(o.crash ? { crash: o.crash } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.registry ? { registry: o.registry } : {}),
    });
  }

  // ---- writes (each kind's file says what they mean) ----

  writeIntent(intent: IntentRecord, options: { requireAttachment?: AttachmentRecord } = {}): Promise<void> {
    return intents.writeIntent(this.files, intent, options);
  }
  attemptEnded(intentId: string): void {
    intents.attemptEnded(intentId);
  }
  updateIntent(intent: IntentRecord): Promise<CommitOutcome> {
    return intents.updateIntent(this.files, intent);
  }
  removeIntent(owner: Owner, intentId?: string): Promise<boolean> {
    return intents.removeIntent(this.files, owner, intentId);
  }

  prepareAttachment(record: AttachmentRecord): PreparedRecord {
    return attachments.prepareAttachment(this.files, record);
  }
  commitAttachment(record: AttachmentRecord, intentId?: string, prepared?: PreparedRecord): Promise<CommitOutcome> {
    return attachments.commitAttachment(this.files, record, intentId, prepared);
  }
  removeDeletedAttachment(deleted: AttachmentRecord): Promise<AttachmentRecord | undefined> {
    return attachments.removeDeletedAttachment(this.files, deleted);
  }
  removeAttachment(owner: Owner): Promise<boolean> {
    return attachments.removeAttachment(this.files, owner);
  }

  tombstone(owner: Owner, reason: string, options: TombstoneOptions = {}): Promise<IntentRecord | undefined> {
    return tombstones.writeTombstone(this.files, owner, reason, options);
  }
  ipamReleased(owner: Owner): Promise<void> {
    return tombstones.ipamReleased(this.files, owner);
  }
  removeTombstone(owner: Owner, expected?: TombstoneRecord): Promise<boolean> {
    return tombstones.removeTombstone(this.files, owner, expected);
  }

  /**
   * Removes a tombstone that only tidies (removeTombstone's rules): a failure is noted, not thrown, and the audit
   * removes the tombstone later, once its grace is over (orphans/audit.ts tidy). True when it was removed.
   */
  async tidyTombstone(owner: Owner, what: string): Promise<boolean> {
    try {
      return await this.removeTombstone(owner);
    } catch (e) {
      this.files.choreFailed(e, what, this.files.path('tombstone', owner));
      return false;
    }
  }

  // ---- housekeeping ----

  /** When the whole node was last audited from this state directory (markAudited), or undefined. */
  lastAudited(): number | undefined {
    return lastAudited(this.dir);
  }

  /** Best effort: a stamp that cannot be written only means the next ADD audits again. */
  markAudited(at: number): void {
    markAudited(this.dir, at, this.files.log, () => this.files.ensure());
  }

  /** The adapter each network bound when first seen (adapters-seen.ts). */
  adaptersSeen(): AdaptersSeen {
    return readAdaptersSeen(this.dir);
  }

  /** Best effort, as markAudited. */
  noteAdaptersSeen(seen: AdaptersSeen): void {
    writeAdaptersSeen(this.dir, seen, this.files.log, () => this.files.ensure());
  }

  /** Housekeeping that failed and is still to do (housekeeping.ts), as noted in the state directory. */
  housekeeping(): NotedChore[] {
    return notedChores(this.dir);
  }

  /** Notes failed chores (logged, and shown by `hcn-cni state`) and forgets the files in `done`. Never throws. */
  noteHousekeeping(failed: readonly FailedChore[], done: readonly string[] = []): NotedChore[] {
    return noteChores(this.dir, failed, this.files.now(), this.files.log, done);
  }

  /**
   * Deletes quarantined files (the operator's `hcn-cni state --clear-quarantine`, or a DEL that dealt with the
   * owner's objects). A file that cannot be deleted is housekeeping: noted, and deleted by a later audit.
   */
  clearQuarantine(owner?: Owner): number {
    this.files.ensure();
    return this.files.quarantine.clear(this.files, owner);
  }

  /** The path of an owner's record file of a kind (named in housekeeping notes). */
  recordFile(kind: RecordKind, owner: Owner): string {
    return this.files.path(kind, owner);
  }

  /** Deletes a file a noted chore deletes as it is (housekeeping.ts deleteNoted): only ours to delete. */
  deleteNoted(file: string): void {
    deleteNoted(this.dir, file);
  }
}
