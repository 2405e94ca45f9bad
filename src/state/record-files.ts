/**
 * The files under a state directory that every kind of record shares: where a record lives, how it is read (strictly,
 * quarantining what does not parse), written (a temp file renamed over it, as durable as its kind needs) and removed
 * (set aside when it cannot be deleted), and the state lock the kinds' read-then-write steps run under.
 * attachments.ts, intents.ts and tombstones.ts say what each kind's writes mean; store.ts is their front.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { HostOs } from '../hns/host-os';
import {
  fsyncDir,
  removeFile,
  windowsRetry,
  writeFileAtomic,
  type CrashHook,
  type Durability,
  type PreparedWrite,
} from './atomic';
import type { ClaimRegistry } from './claims';
import { DIRS, fileKey, QUARANTINE, recordPath, SET_ASIDE } from './file-names';
import { chore, choreFailed, type ChoreContext, type HousekeepingLog } from './housekeeping';
import { onState, StateIoError } from './io-error';
import { StateLock } from './lock';
import { Quarantine } from './quarantine';
import {
  parseRecord,
  NewerRecordError,
  RecordFormatError,
  type AnyRecord,
  type Owner,
  type RecordKind,
} from './records';
import { readStateFile } from './safe-read';

/** The store's log: a warning for each file it quarantines, skips or cannot tidy. */
export type StoreWarn = HousekeepingLog;

export interface StoreOptions {
  os: HostOs;
  now?: () => number;
  crash?: CrashHook;
  lockTimeoutMs?: number;
  log?: StoreWarn;
  /** The node-wide register of live claims (claims.ts): intents are registered there too. */
  registry?: ClaimRegistry;
}

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
export const WRITE_DURABILITY: Record<RecordKind, Durability> = {
  attachment: 'content',
  intent: 'none',
  tombstone: 'full',
};
const STALE_TMP_MS = 10 * 60_000;
let setAsideCounter = 0;
/** Deleting a file fails with these when something holds or protects it (Windows: read-only, a deny ACL, a scanner). */
const UNDELETABLE = new Set(['EPERM', 'EACCES', 'EBUSY']);

export class RecordFiles implements ChoreContext {
  readonly lock: StateLock;
  readonly now: () => number;
  readonly crash: CrashHook | undefined;
  readonly log: StoreWarn | undefined;
  readonly os: HostOs;
  readonly registry: ClaimRegistry | undefined;
  readonly quarantine: Quarantine;
  private ready = false;

  constructor(
    readonly dir: string,
    options: StoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.crash = options.crash;
    this.log = options.log;
    this.os = options.os;
    this.registry = options.registry;
    this.lock = new StateLock(path.join(dir, 'lock'), options.os, options.lockTimeoutMs);
    this.quarantine = new Quarantine(dir, this.now, this.log);
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

  path(kind: RecordKind, owner: Owner): string {
    return recordPath(this.dir, kind, owner);
  }

  /** Runs a removal that only tidies (housekeeping.ts): noted, not thrown. True when done. */
  chore(what: string, file: string, run: () => unknown, deleteFile = false): boolean {
    return chore(this, what, file, run, deleteFile);
  }

  /** A chore's failure noted, or thrown when it is not housekeeping's (housekeeping.ts). */
  choreFailed(e: unknown, what: string, file: string, deleteFile = false): void {
    choreFailed(this, e, what, file, deleteFile);
  }

  /**
   * Writes a record. Something that is not a file at its path (a directory someone created) is moved to quarantine
   * first, so it costs its owner nothing more than a warning. How much of the write a power cut may undo is the
   * kind's (WRITE_DURABILITY).
   */
  write(record: AnyRecord, point: string): void {
    const file = this.path(record.kind, record);
    const data = JSON.stringify(record, null, 1) + '\n';
    const durability = WRITE_DURABILITY[record.kind];
    this.placing(record.kind, file, () => writeFileAtomic(file, data, point, this.crash, durability));
  }

  /** write()'s second half for a prepared record: the rename, with the same care for what is in the way. */
  publish(prepared: PreparedWrite, kind: RecordKind): void {
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
        this.quarantine.move(kind, file, 'not a regular file (found where a record was being written)');
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
  remove(kind: RecordKind, owner: Owner, point: string, durable = true): boolean {
    const file = this.path(kind, owner);
    return onState(file, 'removing', () => {
      if (this.notAFile(file)) {
        this.quarantine.move(kind, file, 'not a regular file (found where a record was being removed)');
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

  read<K extends RecordKind>(kind: K, owner: Owner): Extract<AnyRecord, { kind: K }> | undefined {
    this.ensure();
    const file = this.path(kind, owner);
    const rec = this.readFile(kind, file);
    // A newer version's record of this very owner: the verb must not go on as if there were none (a DEL would
    // tombstone and delete by name). Error 5 names the file; nothing was changed.
    const newer = rec ? undefined : this.quarantine.newerAt(file);
    if (newer) throw new StateIoError(file, newer.reason, undefined);
    return rec;
  }

  private readFile<K extends RecordKind>(kind: K, file: string): Extract<AnyRecord, { kind: K }> | undefined {
    const got = onState(file, 'reading', () => windowsRetry(() => readStateFile(file)));
    if (got.kind === 'missing') return undefined;
    if (got.kind === 'bad') {
      this.quarantine.move(kind, file, got.reason);
      return undefined;
    }
    return this.parseOrQuarantine(kind, file, got.text);
  }

  readAll<K extends RecordKind>(kind: K): Array<Extract<AnyRecord, { kind: K }>> {
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
        this.quarantine.keepNewer(kind, file, e.schema, e.message);
        return undefined;
      }
      if (!(e instanceof RecordFormatError)) throw e;
      this.quarantine.move(kind, file, e.message);
      return undefined;
    }
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
