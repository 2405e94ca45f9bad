/**
 * The quarantine of a state directory: unreadable record files — and anything at a record's path that is not a small
 * regular file (a directory, a FIFO, a symlink) — are moved to <stateDir>/quarantine/ with a `.why` beside them, so
 * one bad file costs one pod, never the node. What cannot be moved (read-only, permissions) is skipped with a warning
 * and remembered in this process, so it still protects its owner's objects; so is a newer hcn-cni's record, which is
 * not ours to judge and stays where it is.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ownerFromFileKey, fileKey, QUARANTINE } from './file-names';
import { errorText, isHousekeepingFailure, noteChores, type ChoreContext, type HousekeepingLog } from './housekeeping';
import { onState } from './io-error';
import type { Owner, RecordKind } from './records';
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

export class Quarantine {
  /** Bad files that could not be moved to quarantine (read-only, permissions): skipped, but they still protect. */
  private readonly unmovable = new Map<string, QuarantinedFile>();

  constructor(
    private readonly dir: string,
    private readonly now: () => number,
    private readonly log: HousekeepingLog | undefined,
  ) {}

  /**
   * Moves a bad file out of the way. When it cannot be moved (read-only file system, permissions), it is skipped
   * with a warning and remembered, so the audit still treats its owner as quarantined (protected) in this process.
   */
  move(kind: RecordKind, file: string, reason: string): void {
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
   * A newer hcn-cni's record: not ours to judge, so left in place, and its owner protected like a quarantined one
   * (the audit touches none of its objects), in this process.
   */
  keepNewer(kind: RecordKind, file: string, schema: unknown, reason: string): void {
    const key = path.basename(file, '.json');
    if (!this.unmovable.has(file)) this.log?.warn({ file, schema }, `state file ${reason}`);
    this.unmovable.set(file, {
      file,
      kind,
      key,
      owner: ownerFromFileKey(key),
      reason,
      at: this.now(),
      newer: true,
    });
  }

  /** The newer version's record left at this path, if any (a verb must not go on as if there were none). */
  newerAt(file: string): QuarantinedFile | undefined {
    const q = this.unmovable.get(file);
    return q?.newer ? q : undefined;
  }

  /** The quarantined files: those moved, and those that could not be (or were newer) in this process. */
  list(): QuarantinedFile[] {
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

  /**
   * Deletes quarantined files (all, or an owner's). A file that cannot be deleted is housekeeping: noted, and deleted
   * by a later audit. A file that could not even be moved is the operator's to remove.
   */
  clear(chores: ChoreContext, owner?: Owner): number {
    let n = 0;
    const key = owner ? fileKey(owner) : undefined;
    for (const q of this.list()) {
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
        noteChores(
          chores.dir,
          [{ what: 'clearing a quarantined record', file: q.file, error: errorText(e), deleteFile: true }],
          chores.now(),
          chores.log,
        );
      }
    }
    return n;
  }
}
