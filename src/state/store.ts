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
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { HostOs } from '../hns/host-os';
import {
  fsyncDir,
  prepareWrite,
  removeFile,
  windowsRetry,
  writeFileAtomic,
  type CrashHook,
  type Durability,
  type PreparedWrite,
} from './atomic';
import type { Claim, ClaimRegistry, NewerClaim } from './claims';
import { fileKey, ownerFromFileKey } from './file-names';
import {
  errorText,
  isHousekeepingFailure,
  noteChores,
  notedChores,
  type FailedChore,
  type NotedChore,
} from './housekeeping';
import { onState, StateIoError, stateIoError } from './io-error';
import { intentLiveness } from './liveness';
import { StateLock } from './lock';
import {
  ownerKey,
  parseRecord,
  NewerRecordError,
  RecordFormatError,
  type AnyRecord,
  type AttachmentRecord,
  type IntentRecord,
  type HeldBy,
  type Owner,
  type PlannedObject,
  type RecordKind,
  type TombstoneRecord,
  tombstoneWrite,
} from './records';
import { readStateFile } from './safe-read';

export interface QuarantinedFile {
  /** Path of the moved file (or of the unmovable one, left where it was). */
  file: string;
  kind: RecordKind;
  /** The file key (file-names.ts) it was found under: how the audit knows whose objects it must not touch. */
  key: string;
  /** From the file name, when the name says it (not for hashed names). */
  owner: Owner | undefined;
  reason: string;
  at: number;
  /** A newer hcn-cni's record (records.ts NewerRecordError), left where it is rather than quarantined. */
  newer?: boolean;
}

export interface StateSnapshot {
  attachments: AttachmentRecord[];
  intents: IntentRecord[];
  tombstones: TombstoneRecord[];
  quarantined: QuarantinedFile[];
  /** Live claims of other state directories on this node (the node-wide register), when there is one. */
  otherClaims?: Claim[];
  /** Their claims past the deadline whose process still runs (claims.ts): an audit voids them before a delete. */
  expiredClaims?: Claim[];
}

export interface StoreWarn {
  warn(obj: object, msg?: string): void;
}

export interface StoreOptions {
  os: HostOs;
  now?: () => number;
  crash?: CrashHook;
  lockTimeoutMs?: number;
  log?: StoreWarn;
  /** The node-wide register of live claims (claims.ts): intents are registered there too. */
  registry?: ClaimRegistry;
}

const DIRS: Record<RecordKind, string> = { attachment: 'attachments', intent: 'intents', tombstone: 'tombstones' };

/**
 * What a power cut may do to a write of each kind (atomic.ts), and why that is enough. A power cut ends every process
 * and every pod of the node, so what a record protects afterwards is only the cleanup of a dead pod's objects — which
 * the audit, DEL and GC do from object names when no record is left.
 *  - intent ('none'): it claims objects only while its process runs. Lost, its objects are ownerless ones of ours,
 *    removed by the audit as a dead intent's would be; torn, it is quarantined and protects its owner's objects until
 *    that pod's DEL.
 *  - attachment ('content'): it claims objects while its pod runs. Lost (the rename not yet on disk), the dead pod's
 *    objects are the audit's to remove, or the DEL's (a DEL without a record deletes by owner name); it is never
 *    torn, so a cut does not leave a quarantined record that holds the pod's objects until its DEL.
 *  - tombstone ('full'): it outlives the DEL that wrote it and may hold back an IPAM release (ipamPending) that
 *    nothing else remembers.
 */
const WRITE_DURABILITY: Record<RecordKind, Durability> = { attachment: 'content', intent: 'none', tombstone: 'full' };
const QUARANTINE = 'quarantine';
/** The stamp of the last whole-node audit (epoch ms): not a record, so no reader of records ever sees it. */
const AUDITED = 'audited';
const STALE_TMP_MS = 10 * 60_000;
/** The marker in the temp name of a record set aside because it could not be deleted (StateStore.remove). */
const SET_ASIDE = '.removed-';
let setAsideCounter = 0;
/** Deleting a file fails with these when something holds or protects it (Windows: read-only, a deny ACL, a scanner). */
const UNDELETABLE = new Set(['EPERM', 'EACCES', 'EBUSY']);

/** An attachment record whose file is being written ahead of its commit (StateStore.prepareAttachment). */
export interface PreparedRecord {
  readonly record: AttachmentRecord;
  readonly write: PreparedWrite;
  /** Removes the record's temp file (after its fsync): an ADD that will not commit awaits it. */
  discard(): Promise<void>;
}

/** superseded: another attempt replaced this one's intent; deleted: a DEL voided it (its tombstone names it). */
export type CommitOutcome = 'committed' | 'superseded' | 'deleted' | 'expired';

/** Another attempt of the same owner is running (a live intent with another id): the new ADD must not take over. */
export class ConcurrentAddError extends Error {
  override readonly name = 'ConcurrentAddError';
  constructor(readonly running: IntentRecord) {
    super(
      `another ADD of ${ownerKey(running)} is running (pid ${running.pid}, since ${new Date(running.createdAt).toISOString()})`,
    );
  }
}

/** The record a repair set out to repair, or a DEL deleted by, is no longer the one in the state directory. */
export class AttachmentChangedError extends Error {
  override readonly name = 'AttachmentChangedError';
  constructor() {
    super('the attachment record was deleted or replaced meanwhile');
  }
}

/** The same record: same objects, same repair (a repair changes repairedAt, a new ADD createdAt). */
function sameAttachment(a: AttachmentRecord | undefined, b: AttachmentRecord): boolean {
  return (
    a !== undefined &&
    a.endpoint.id.toLowerCase() === b.endpoint.id.toLowerCase() &&
    a.createdAt === b.createdAt &&
    a.repairedAt === b.repairedAt
  );
}

/** Intent ids of ADD attempts running in this process (writeIntent adds, attemptEnded removes). */
const attemptsHere = new Set<string>();

export class StateStore {
  readonly dir: string;
  private readonly lock: StateLock;
  private readonly now: () => number;
  private readonly crash: CrashHook | undefined;
  private readonly log: StoreWarn | undefined;
  private readonly os: HostOs;
  private readonly registry: ClaimRegistry | undefined;
  private ready = false;
  /** Bad files that could not be moved to quarantine (read-only, permissions): skipped, but they still protect. */
  private readonly unmovable = new Map<string, QuarantinedFile>();

  constructor(dir: string, options: StoreOptions) {
    this.dir = dir;
    this.now = options.now ?? Date.now;
    this.crash = options.crash;
    this.log = options.log;
    this.os = options.os;
    this.registry = options.registry;
    this.lock = new StateLock(path.join(dir, 'lock'), options.os, options.lockTimeoutMs);
  }

  /**
   * Creates the directories (0700) on first use. Every verb has a store of its own (a resident service runs many), so
   * the usual case — the directories are there — costs one stat each.
   */
  ensure(): void {
    if (this.ready) return;
    for (const d of [...Object.values(DIRS), QUARANTINE]) {
      const dir = path.join(this.dir, d);
      onState(dir, 'creating the state directory', () => {
        let st = fs.statSync(dir, { throwIfNoEntry: false });
        if (!st) {
          fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
          st = fs.statSync(dir);
        }
        // A directory, or a symlink to one, is fine; anything else is named.
        if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      });
    }
    this.ready = true;
  }

  // ---- reads ----

  getAttachment(owner: Owner): AttachmentRecord | undefined {
    return this.read('attachment', owner);
  }
  getIntent(owner: Owner): IntentRecord | undefined {
    return this.read('intent', owner);
  }
  getTombstone(owner: Owner): TombstoneRecord | undefined {
    return this.read('tombstone', owner);
  }

  /** Everything on disk (unreadable files are quarantined on the way), and other state directories' claims. */
  snapshot(): StateSnapshot {
    this.ensure();
    const attachments = this.readAll('attachment');
    const intents = this.readAll('intent');
    const tombstones = this.readAll('tombstone');
    return { attachments, intents, tombstones, ...this.quarantinedAndClaims() };
  }

  /** The tombstones only (an ADD checks them for kept IPs without reading every record). */
  tombstones(): TombstoneRecord[] {
    this.ensure();
    return this.readAll('tombstone');
  }

  /**
   * What the state says of one owner, as a snapshot detect() can judge that owner's objects by: its record, intent
   * (unless it is `exceptIntent`: an ADD's own, which has created nothing yet) and tombstone, its quarantined files,
   * and other state directories' claims on it.
   */
  ownerSnapshot(owner: Owner, exceptIntent?: string): StateSnapshot {
    const record = this.getAttachment(owner);
    const intent = this.getIntent(owner);
    const tomb = this.getTombstone(owner);
    const key = fileKey(owner);
    return {
      attachments: record ? [record] : [],
      intents: intent && intent.id !== exceptIntent ? [intent] : [],
      tombstones: tomb ? [tomb] : [],
      // Read after the reads above, which quarantine a record that has become unreadable: its owner may be live.
      ...this.quarantinedAndClaims(owner, key),
    };
  }

  /** When the whole node was last audited from this state directory (markAudited), or undefined. */
  lastAudited(): number | undefined {
    try {
      const at = Number(fs.readFileSync(path.join(this.dir, AUDITED), 'utf8'));
      return Number.isFinite(at) && at > 0 ? at : undefined;
    } catch {
      return undefined;
    }
  }

  /** Best effort: a stamp that cannot be written only means the next ADD audits again. */
  markAudited(at: number): void {
    try {
      this.ensure();
      fs.writeFileSync(path.join(this.dir, AUDITED), String(at), { mode: 0o600 });
    } catch (e) {
      // read-only or full state: the audit itself is what mattered
      this.log?.warn(
        { file: path.join(this.dir, AUDITED), err: errorText(e) },
        'could not stamp the whole-node audit as done; the next ADD audits again',
      );
    }
  }

  /** Housekeeping that failed and is still to do (housekeeping.ts), as noted in the state directory. */
  housekeeping(): NotedChore[] {
    return notedChores(this.dir);
  }

  /** Notes failed chores (logged, and shown by `hcn-cni state`) and forgets the files in `done`. Never throws. */
  noteHousekeeping(failed: readonly FailedChore[], done: readonly string[] = []): NotedChore[] {
    return noteChores(this.dir, failed, this.now(), this.log, done);
  }

  /**
   * Runs a removal that only tidies: its failure is noted, not thrown (housekeeping.ts). True when it was done (or
   * there was nothing to do).
   */
  private chore(what: string, file: string, run: () => unknown, deleteFile = false): boolean {
    try {
      run();
      return true;
    } catch (e) {
      this.choreFailed(e, what, file, deleteFile);
      return false;
    }
  }

  /** A chore's failure noted (logged, counted by the service, retried later), or thrown when it is not housekeeping's. */
  private choreFailed(e: unknown, what: string, file: string, deleteFile = false): void {
    // File-system trouble only: anything else (a bug, a test's crash point) is not housekeeping's to swallow.
    if (!isHousekeepingFailure(e)) throw e;
    this.noteHousekeeping([{ what, file, error: errorText(e), ...(deleteFile ? { deleteFile } : {}) }]);
  }

  /**
   * Removes a tombstone that only tidies (removeTombstone's rules): a failure is noted, not thrown, and the audit
   * removes the tombstone later, once its grace is over (orphans/audit.ts tidy). True when it was removed.
   */
  async tidyTombstone(owner: Owner, what: string): Promise<boolean> {
    try {
      return await this.removeTombstone(owner);
    } catch (e) {
      this.choreFailed(e, what, this.path('tombstone', owner));
      return false;
    }
  }

  /**
   * The quarantined files (all, or those under an owner's file key) and the claims of other state directories on
   * this node (all, or an owner's): the live ones, and (`expiredClaims`) those past their deadline whose process still
   * runs; a newer version's claim is among the quarantined, as `newer`: it protects its owner.
   */
  private quarantinedAndClaims(
    owner?: Owner,
    key?: string,
  ): { quarantined: QuarantinedFile[]; otherClaims?: Claim[]; expiredClaims?: Claim[] } {
    const quarantined = this.quarantined().filter((q) => key === undefined || q.key === key);
    if (!this.registry) return { quarantined };
    const newer: NewerClaim[] = [];
    const others = this.registry.otherClaims(this.dir, this.now(), this.os.processStartTime, this.log, owner, newer);
    for (const n of newer) {
      quarantined.push({ ...n, kind: 'intent', owner: ownerFromFileKey(n.key), at: this.now(), newer: true });
    }
    return { quarantined, otherClaims: others.live, ...(owner ? {} : { expiredClaims: others.expired }) };
  }

  /** Live claims of other state directories on this node (all, or an owner's). */
  otherClaims(owner?: Owner): Claim[] {
    return this.registry?.otherClaims(this.dir, this.now(), this.os.processStartTime, this.log, owner).live ?? [];
  }

  /** Another state directory of this node, with this store's clock, OS helpers, log and claims register. */
  sibling(dir: string): StateStore {
    return new StateStore(dir, {
      os: this.os,
      now: this.now,
      ...(this.crash ? { crash: this.crash } : {}),
      ...(this.log ? { log: this.log } : {}),
      ...(this.registry ? { registry: this.registry } : {}),
    });
  }

  quarantined(): QuarantinedFile[] {
    this.ensure();
    const out: QuarantinedFile[] = [...this.unmovable.values()];
    const qdir = path.join(this.dir, QUARANTINE);
    for (const name of onState(qdir, 'listing', () => fs.readdirSync(qdir))) {
      if (name.endsWith('.why')) continue;
      const m = /^(attachment|intent|tombstone)--(.+)\.json\.(\d+)$/.exec(name);
      if (!m) continue;
      const file = path.join(qdir, name);
      const why = readStateFile(`${file}.why`, 64 * 1024);
      out.push({
        file,
        kind: m[1] as RecordKind,
        key: m[2]!,
        owner: ownerFromFileKey(m[2]!),
        reason: why.kind === 'text' ? why.text : 'unknown',
        at: Number(m[3]),
      });
    }
    return out;
  }

  // ---- writes ----

  /**
   * Writes this attempt's intent. An intent of another attempt that is still live (its process runs, its deadline
   * has not passed, no DEL voided it) is a concurrent ADD of the same pod: it keeps the owner and this one gets a
   * ConcurrentAddError, rather than both overwriting each other's claims and both failing.
   */
  async writeIntent(intent: IntentRecord, options: { requireAttachment?: AttachmentRecord } = {}): Promise<void> {
    this.ensure();
    await this.lock.run(() => {
      // A repair (src/plugin/verbs/repair.ts) claims only while the record it repairs is still there, unchanged: checked
      // under the same lock as the write, so a DEL that dropped the record first is never undone by the repair.
      const required = options.requireAttachment;
      if (required && !sameAttachment(this.read('attachment', intent), required)) throw new AttachmentChangedError();
      const current = this.read('intent', intent);
      // An intent of this very process (a resident service, or an embedder) whose attempt has ended is not a
      // concurrent ADD however alive its pid is: it is what an ADD left for the audit when HNS stopped answering.
      const endedHere = current !== undefined && current.pid === intent.pid && !attemptsHere.has(current.id);
      if (current && current.id !== intent.id && !endedHere) {
        const live = intentLiveness(current, this.read('tombstone', intent), this.now(), this.os.processStartTime);
        if (live.live) throw new ConcurrentAddError(current);
      }
      // Registered node-wide before the intent counts, so no audit of any state directory misses it.
      this.registry?.register(this.dir, intent);
      this.write(intent, 'intent');
      attemptsHere.add(intent.id);
    });
  }

  /** The ADD attempt that wrote this intent has returned (whatever became of its intent). */
  attemptEnded(intentId: string): void {
    attemptsHere.delete(intentId);
  }

  /** Rewrites this attempt's intent (what it plans became known), unless a DEL or another ADD replaced it. */
  async updateIntent(intent: IntentRecord): Promise<CommitOutcome> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', intent);
      if (!current || current.id !== intent.id) return this.whyGone(intent);
      this.registry?.register(this.dir, intent);
      this.write(intent, 'intent-update');
      return 'committed' as const;
    });
  }

  /** Why an attempt's intent is no longer current: a DEL voided it, or another attempt replaced it. */
  private whyGone(owner: Owner & { id: string }): 'deleted' | 'superseded' {
    return this.read('tombstone', owner)?.voids?.includes(owner.id) ? 'deleted' : 'superseded';
  }

  /**
   * Starts writing an attachment record before the ADD can commit it: the file is created and written now and its
   * fsync runs while the ADD still waits for HNS (the attach), instead of after. Nothing is visible until
   * commitAttachment(record, intentId, prepared) renames it into place under the lock; an ADD that does not get there
   * calls discard().
   */
  prepareAttachment(record: AttachmentRecord): PreparedRecord {
    this.ensure();
    const file = this.path('attachment', record);
    const data = JSON.stringify(record, null, 1) + '\n';
    const write = onState(file, 'writing', () =>
      prepareWrite(file, data, 'attachment', this.crash, WRITE_DURABILITY.attachment),
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
  async commitAttachment(
    record: AttachmentRecord,
    intentId?: string,
    prepared?: PreparedRecord,
  ): Promise<CommitOutcome> {
    if (prepared && prepared.record !== record) throw new Error('bug: committing another record than the prepared one');
    let published = false;
    try {
      this.ensure();
      if (prepared) {
        const file = prepared.write.file;
        await prepared.write.ready.catch((e: unknown) => {
          throw stateIoError(e, file, 'writing');
        });
      }
      return await this.lock.run(() => {
        if (intentId !== undefined) {
          const current = this.read('intent', record);
          if (!current || current.id !== intentId) return this.whyGone({ ...record, id: intentId });
          if (this.now() >= current.deadline) return 'expired' as const;
          const tomb = this.read('tombstone', record);
          if (tomb?.voids?.includes(current.id)) return 'deleted' as const;
        }
        if (prepared) this.publish(prepared.write, record.kind);
        else this.write(record, 'attachment');
        published = true;
        // Committed. What follows only tidies: the record supersedes the intent (a leftover one is voided by the
        // pod's DEL, which removes it again) and any older tombstone (a leftover one is kept from releasing the
        // owner's IP while this record exists: pending-ipam.ts), so a file that cannot be removed fails nothing.
        this.chore(`removing the intent of ${ownerKey(record)} after its commit`, this.path('intent', record), () =>
          this.remove('intent', record, 'intent', false),
        );
        this.chore(`removing the tombstone of ${ownerKey(record)} after a commit`, this.path('tombstone', record), () =>
          this.remove('tombstone', record, 'tombstone'),
        );
        // Attached now: an audit of another state directory protects it as an endpoint in use.
        if (intentId !== undefined) this.registry?.withdraw(record, intentId, this.log);
        return 'committed' as const;
      });
    } finally {
      if (!published) await prepared?.discard();
    }
  }

  /**
   * DEL's last step after it deleted by `deleted`: drops the record, unless a repair re-created its objects meanwhile
   * (then the record now there is returned, for the DEL to delete by), and in the same lock voids the owner's intent,
   * if any (a repair under way: its commit then fails and it undoes what it created; the tombstone keeps what it
   * planned for the audit, should it not get to).
   */
  async removeDeletedAttachment(deleted: AttachmentRecord): Promise<AttachmentRecord | undefined> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('attachment', deleted);
      if (current && !sameAttachment(current, deleted)) return current;
      this.remove('attachment', deleted, 'attachment', false);
      const intent = this.read('intent', deleted);
      if (intent) {
        const prior = this.read('tombstone', deleted);
        const tomb: TombstoneRecord = {
          kind: 'tombstone',
          schema: 1,
          containerId: deleted.containerId,
          ifname: deleted.ifname,
          createdAt: this.now(),
          writeId: randomUUID(),
          reason: 'DEL while a repair of the attachment ran',
          planned: dedupe([...(prior?.planned ?? []), ...intent.planned]),
          voids: [...new Set([...(prior?.voids ?? []), intent.id])],
          ...(deleted.cniNetwork ? { cniNetwork: deleted.cniNetwork } : {}),
          ...(prior?.ipamPending ? { ipamPending: true } : {}),
          ...(prior?.heldBy?.length ? { heldBy: prior.heldBy } : {}),
        };
        this.write(tomb, 'tombstone');
        // Voided by the tombstone just written (by id): removing it only tidies (removeTombstone keeps the
        // tombstone while it is there).
        this.chore(`removing the intent of ${ownerKey(deleted)} its DEL voided`, this.path('intent', deleted), () =>
          this.remove('intent', deleted, 'intent'),
        );
        this.registry?.withdraw(deleted, intent.id, this.log);
      }
      return undefined;
    });
  }

  async removeAttachment(owner: Owner): Promise<boolean> {
    this.ensure();
    // Not fsynced: a removal a power cut undoes brings back a record of objects this DEL already deleted (their names
    // carry the dead pod's owner tag, their ids are gone from HNS): it protects nothing, and the pod's next DEL or
    // GC drops it.
    return this.lock.run(() => this.remove('attachment', owner, 'attachment', false));
  }

  /** Removes the owner's intent, only if it is still the one with this id (when given). */
  async removeIntent(owner: Owner, intentId?: string): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', owner);
      if (!current || (intentId !== undefined && current.id !== intentId)) return false;
      const removed = this.remove('intent', owner, 'intent');
      this.registry?.withdraw(owner, current.id, this.log);
      return removed;
    });
  }

  /**
   * Writes a tombstone for the owner and drops its intent, returning the intent it voided. The tombstone keeps what
   * that intent planned, so a later audit can finish deleting objects HNS completes after this DEL, and names the
   * intents it voided. `onlyIntent`: void the intent only if it is still this one (GC acting on a snapshot must not
   * void a newer, running ADD's).
   */
  async tombstone(
    owner: Owner,
    reason: string,
    options: {
      extra?: PlannedObject[];
      onlyIntent?: string;
      cniNetwork?: string;
      ipamPending?: boolean;
      heldBy?: readonly HeldBy[];
    } = {},
  ): Promise<IntentRecord | undefined> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', owner);
      const intent =
        current && (options.onlyIntent === undefined || current.id === options.onlyIntent) ? current : undefined;
      const prior = this.read('tombstone', owner);
      const planned = dedupe([...(prior?.planned ?? []), ...(intent?.planned ?? []), ...(options.extra ?? [])]);
      const voids = [...new Set([...(prior?.voids ?? []), ...(intent ? [intent.id] : [])])];
      const cniNetwork = options.cniNetwork ?? intent?.cniNetwork ?? prior?.cniNetwork;
      const heldBy = [...(prior?.heldBy ?? [])];
      for (const h of options.heldBy ?? [])
        if (!heldBy.some((x) => x.id === h.id && x.address === h.address)) heldBy.push({ ...h });
      const tomb: TombstoneRecord = {
        kind: 'tombstone',
        schema: 1,
        containerId: owner.containerId,
        ifname: owner.ifname,
        createdAt: this.now(),
        writeId: randomUUID(),
        reason,
        planned,
        ...(voids.length ? { voids } : {}),
        ...(cniNetwork ? { cniNetwork } : {}),
        ...(options.ipamPending || prior?.ipamPending ? { ipamPending: true } : {}),
        ...(heldBy.length ? { heldBy } : {}),
      };
      this.write(tomb, 'tombstone');
      if (intent) {
        // Voided by the tombstone just written (by id): removing it only tidies (removeTombstone keeps the
        // tombstone while it is there).
        this.chore(`removing the intent of ${ownerKey(owner)} its DEL voided`, this.path('intent', owner), () =>
          this.remove('intent', owner, 'intent'),
        );
        this.registry?.withdraw(owner, intent.id, this.log);
      }
      return intent;
    });
  }

  /** The IPAM allocation a tombstone kept (ipamPending) has been released. */
  async ipamReleased(owner: Owner): Promise<void> {
    this.ensure();
    await this.lock.run(() => {
      const t = this.read('tombstone', owner);
      if (!t?.ipamPending) return;
      const { ipamPending: _released, heldBy: _holders, ...rest } = t;
      this.write({ ...rest, writeId: randomUUID() }, 'tombstone');
    });
  }

  /**
   * Removes the owner's tombstone unless it still holds back an IPAM release, or it is not the write `expected` (when
   * given: a tombstone written since, by identity — tombstoneWrite — never by comparing clocks). An intent the
   * tombstone voids that is still on disk (its removal failed) goes first: without the tombstone it would count again.
   */
  async removeTombstone(owner: Owner, expected?: TombstoneRecord): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => {
      const t = this.read('tombstone', owner);
      if (!t || t.ipamPending || (expected !== undefined && tombstoneWrite(t) !== tombstoneWrite(expected)))
        return false;
      const intent = this.read('intent', owner);
      if (intent && t.voids?.includes(intent.id)) this.remove('intent', owner, 'intent');
      return this.remove('tombstone', owner, 'tombstone');
    });
  }

  /**
   * Deletes quarantined files (the operator's `hcn-cni state --clear-quarantine`, or a DEL that dealt with the
   * owner's objects). A file that cannot be deleted is housekeeping: noted, and deleted by a later audit.
   */
  clearQuarantine(owner?: Owner): number {
    let n = 0;
    const key = owner ? fileKey(owner) : undefined;
    for (const q of this.quarantined()) {
      if (key !== undefined && q.key !== key) continue;
      if (this.unmovable.has(q.file)) continue; // could not even be moved: the operator's to remove
      try {
        // A quarantined "record" may be a directory someone created at a record's path: remove it whole (rm does
        // not follow symlinks inside it).
        onState(q.file, 'clearing the quarantine', () => {
          fs.rmSync(q.file, { force: true, recursive: true });
          fs.rmSync(`${q.file}.why`, { force: true });
        });
        n++;
      } catch (e) {
        if (!isHousekeepingFailure(e)) throw e;
        this.noteHousekeeping([
          { what: 'clearing a quarantined record', file: q.file, error: errorText(e), deleteFile: true },
        ]);
      }
    }
    return n;
  }

  /** The path of an owner's record file of a kind (named in housekeeping notes). */
  recordFile(kind: RecordKind, owner: Owner): string {
    return this.path(kind, owner);
  }

  /**
   * Deletes a file a noted chore deletes as it is (housekeeping.ts): only a quarantined file or a record set aside
   * by remove(), of this state directory — a note is not trusted to name anything else.
   */
  deleteNoted(file: string): void {
    const parts = path.relative(this.dir, file).split(path.sep);
    const [sub, name] = parts;
    if (parts.length !== 2 || sub === undefined || name === undefined) return;
    const quarantined = sub === QUARANTINE;
    const setAside = (Object.values(DIRS) as string[]).includes(sub) && name.includes(SET_ASIDE);
    if (!quarantined && !setAside) return;
    onState(file, 'deleting', () => {
      fs.rmSync(file, { force: true, recursive: quarantined });
      if (quarantined) fs.rmSync(`${file}.why`, { force: true });
    });
  }

  // ---- plumbing ----

  private path(kind: RecordKind, owner: Owner): string {
    return path.join(this.dir, DIRS[kind], `${fileKey(owner)}.json`);
  }

  /**
   * Writes a record. Something that is not a file at its path (a directory someone created) is moved to quarantine
   * first, so it costs its owner nothing more than a warning. How much of the write a power cut may undo is the
   * kind's (WRITE_DURABILITY).
   */
  private write(record: AnyRecord, point: string): void {
    const file = this.path(record.kind, record);
    const data = JSON.stringify(record, null, 1) + '\n';
    const durability = WRITE_DURABILITY[record.kind];
    this.placing(record.kind, file, () => writeFileAtomic(file, data, point, this.crash, durability));
  }

  /** write()'s second half for a prepared record: the rename, with the same care for what is in the way. */
  private publish(prepared: PreparedWrite, kind: RecordKind): void {
    this.placing(kind, prepared.file, () => prepared.publish());
  }

  /**
   * Runs `put`, which puts a record file in place by a rename. When something that is not a file is in the way (the
   * rename fails with EISDIR, ENOTEMPTY, EEXIST or EPERM), it is moved to quarantine and `put` runs once more.
   */
  private placing(kind: RecordKind, file: string, put: () => void): void {
    onState(file, 'writing', () => {
      try {
        put();
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'EPERM') throw e;
        if (!this.notAFile(file)) throw e;
        this.quarantine(kind, file, 'not a regular file (found where a record was being written)');
        put();
      }
    });
  }

  private notAFile(file: string): boolean {
    try {
      return !fs.lstatSync(file).isFile();
    } catch {
      return false;
    }
  }

  /**
   * Removes a record file; a directory (or anything else) at its path is moved to quarantine instead. A file that
   * cannot be deleted (EPERM, EACCES, EBUSY: Windows' read-only attribute, a scanner holding it) is set aside under
   * a temp name, which readers skip, and deleted later (readAll); only when it cannot be renamed either does the
   * removal fail.
   */
  private remove(kind: RecordKind, owner: Owner, point: string, durable = true): boolean {
    const file = this.path(kind, owner);
    return onState(file, 'removing', () => {
      if (this.notAFile(file)) {
        this.quarantine(kind, file, 'not a regular file (found where a record was being removed)');
        return true;
      }
      try {
        return removeFile(file, point, this.crash, durable);
      } catch (e) {
        if (!UNDELETABLE.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
        const aside = path.join(
          path.dirname(file),
          `.${path.basename(file)}${SET_ASIDE}${process.pid}-${++setAsideCounter}.tmp`,
        );
        try {
          fs.renameSync(file, aside);
        } catch {
          throw e; // neither deleted nor moved: the first failure is the one to report
        }
        if (durable) fsyncDir(path.dirname(file));
        this.chore(
          `deleting ${path.basename(file)}, set aside as it could not be deleted`,
          aside,
          () => onState(aside, 'deleting', () => fs.rmSync(aside, { force: true })),
          true,
        );
        return true;
      }
    });
  }

  private read<K extends RecordKind>(kind: K, owner: Owner): Extract<AnyRecord, { kind: K }> | undefined {
    this.ensure();
    const file = this.path(kind, owner);
    const rec = this.readFile(kind, file);
    // A newer version's record of this very owner: the verb must not go on as if there were none (a DEL would
    // tombstone and delete by name). Error 5 names the file; nothing was changed.
    const newer = rec ? undefined : this.unmovable.get(file);
    if (newer?.newer) throw new StateIoError(file, newer.reason, undefined);
    return rec;
  }

  private readFile<K extends RecordKind>(kind: K, file: string): Extract<AnyRecord, { kind: K }> | undefined {
    const got = onState(file, 'reading', () => windowsRetry(() => readStateFile(file)));
    if (got.kind === 'missing') return undefined;
    if (got.kind === 'bad') {
      this.quarantine(kind, file, got.reason);
      return undefined;
    }
    return this.parseOrQuarantine(kind, file, got.text);
  }

  private readAll<K extends RecordKind>(kind: K): Array<Extract<AnyRecord, { kind: K }>> {
    const dir = path.join(this.dir, DIRS[kind]);
    const out: Array<Extract<AnyRecord, { kind: K }>> = [];
    for (const name of onState(dir, 'listing', () => fs.readdirSync(dir))) {
      const file = path.join(dir, name);
      if (name.endsWith('.tmp')) {
        this.removeStaleTmp(file);
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const rec = this.readFile(kind, file);
      if (rec) out.push(rec);
    }
    return out;
  }

  private parseOrQuarantine<K extends RecordKind>(
    kind: K,
    file: string,
    text: string,
  ): Extract<AnyRecord, { kind: K }> | undefined {
    try {
      const rec = parseRecord(text, kind);
      if (fileKey(rec) !== path.basename(file, '.json'))
        throw new RecordFormatError('owner does not match the file name');
      return rec;
    } catch (e) {
      if (e instanceof NewerRecordError) {
        // Not ours to judge: left in place, and its owner protected like a quarantined one (the audit touches none
        // of its objects), in this process.
        const key = path.basename(file, '.json');
        if (!this.unmovable.has(file)) this.log?.warn({ file, schema: e.schema }, `state file ${e.message}`);
        this.unmovable.set(file, {
          file,
          kind,
          key,
          owner: ownerFromFileKey(key),
          reason: e.message,
          at: this.now(),
          newer: true,
        });
        return undefined;
      }
      if (!(e instanceof RecordFormatError)) throw e;
      this.quarantine(kind, file, e.message);
      return undefined;
    }
  }

  /**
   * Moves a bad file out of the way. When it cannot be moved (read-only file system, permissions), it is skipped
   * with a warning and remembered, so the audit still treats its owner as quarantined (protected) in this process.
   */
  private quarantine(kind: RecordKind, file: string, reason: string): void {
    const at = this.now();
    const key = path.basename(file, '.json');
    const target = path.join(this.dir, QUARANTINE, `${kind}--${path.basename(file)}.${at}`);
    try {
      fs.renameSync(file, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return; // another process moved it first
      this.unmovable.set(file, {
        file,
        kind,
        key,
        owner: ownerFromFileKey(key),
        reason: `${reason}; could not be moved to quarantine (${code})`,
        at,
      });
      this.log?.warn(
        { file, reason, err: (e as Error).message },
        'unreadable state file could not be moved to quarantine; skipped',
      );
      return;
    }
    try {
      fs.writeFileSync(`${target}.why`, reason, { mode: 0o600 });
    } catch {
      // The reason is a courtesy to the operator; the move is what matters.
    }
    this.log?.warn({ file, quarantinedAs: target, reason }, 'unreadable state record moved to quarantine');
  }

  /**
   * Removes a write's temp file its writer left (10 minutes old), and at once a record set aside by remove(): both
   * are skipped by readers, so failing here costs nothing (a set-aside file that resists is noted when set aside).
   */
  private removeStaleTmp(file: string): void {
    try {
      if (path.basename(file).includes(SET_ASIDE) || this.now() - fs.lstatSync(file).mtimeMs > STALE_TMP_MS)
        fs.rmSync(file, { force: true });
    } catch {
      // gone already, or still undeletable: skipped
    }
  }
}

function dedupe(list: PlannedObject[]): PlannedObject[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.kind}|${p.name}|${p.id ?? ''}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * How many records of a kind a state directory holds, by their file names only (no file is opened or parsed): cheap
 * enough for every metrics scrape. Files being written (.tmp) do not count; an unreadable record counts until a
 * read quarantines it. A directory not created yet holds none.
 */
export function countRecordFiles(stateDir: string, kind: RecordKind): number {
  try {
    return fs.readdirSync(path.join(stateDir, DIRS[kind])).filter((n) => n.endsWith('.json')).length;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}
