/**
 * Housekeeping: removals that only tidy the state directory — a tombstone past its grace, an intent its record or a
 * tombstone has superseded, a quarantined file its DEL dealt with, a file set aside because it could not be deleted.
 * None of them protects anything, so none of them may fail a verb or an audit's verdicts: one file that cannot be
 * removed (read-only, a deny ACL, a scanner holding it, an immutable flag) used to fail every ADD of the node.
 *
 * A chore that fails is logged, noted in <stateDir>/housekeeping.json (shown by `hcn-cni state`; the resident
 * service also counts them in its metrics), and tried again later: by the next whole-node audit (orphans/audit.ts
 * tidy) or by the owner's next DEL. How much is retried is bounded: an audit stops its housekeeping after
 * MAX_FAILED_CHORES_PER_ROUND failures (each removal may spend about a second in windowsRetry), trying the chores
 * that failed before last, and the note keeps at most MAX_NOTED entries.
 *
 * The note is a report, not a record: written best effort (a read-only state directory only loses the note; the log
 * still has every failure), without the state lock (two processes noting at once may lose one note, never a chore).
 */
import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomic } from './atomic';
import { AUDITED, DIRS, QUARANTINE, SET_ASIDE } from './file-names';
import { onState, StateIoError } from './io-error';
import { StateLockTimeoutError } from './lock';
import { entryExists, readStateFile } from './safe-read';

/** The note's file name in the state directory: not a record, so no reader of records ever sees it. */
export const HOUSEKEEPING_FILE = 'housekeeping.json';
/** Failed chores after which an audit leaves the rest of its housekeeping to the next one. */
export const MAX_FAILED_CHORES_PER_ROUND = 3;
/** Notes kept, at most (the oldest are dropped: the log has them). */
const MAX_NOTED = 64;

export interface FailedChore {
  /** What was being done ("removing the tombstone of c1@eth0"). */
  what: string;
  /** The file that could not be removed. */
  file: string;
  error: string;
  /** The file is to be deleted as it is (a set-aside or cleared quarantined file): the audit retries exactly that. */
  deleteFile?: true;
}

export interface NotedChore extends FailedChore {
  failures: number;
  /** When it first and last failed (ms since epoch; for the operator only, never compared for safety). */
  firstAt: number;
  lastAt: number;
}

export interface HousekeepingLog {
  warn(obj: object, msg?: string): void;
}

function noteFile(stateDir: string): string {
  return path.join(stateDir, HOUSEKEEPING_FILE);
}

/** The noted chores whose file is still there (a file gone since is a chore done, by whoever did it). */
export function notedChores(stateDir: string): NotedChore[] {
  let got;
  try {
    got = readStateFile(noteFile(stateDir), 256 * 1024);
  } catch {
    return [];
  }
  if (got.kind !== 'text') return [];
  try {
    const v = JSON.parse(got.text) as unknown;
    if (!Array.isArray(v)) return [];
    return v.filter(
      (c): c is NotedChore =>
        typeof c === 'object' &&
        c !== null &&
        typeof (c as NotedChore).what === 'string' &&
        typeof (c as NotedChore).file === 'string' &&
        typeof (c as NotedChore).error === 'string' &&
        typeof (c as NotedChore).failures === 'number' &&
        entryExists((c as NotedChore).file),
    );
  } catch {
    return [];
  }
}

/**
 * Notes failed chores (and forgets those in `done`), logging each failure. Best effort: never throws.
 * Returns the chores as noted.
 */
export function noteChores(
  stateDir: string,
  failed: readonly FailedChore[],
  now: number,
  log?: HousekeepingLog,
  done: readonly string[] = [],
): NotedChore[] {
  for (const f of failed)
    log?.warn(
      { housekeeping: 'failed', what: f.what, file: f.file, err: f.error },
      'housekeeping failed; it is retried later and fails nothing',
    );
  if (failed.length === 0 && done.length === 0) return notedChores(stateDir);
  const byFile = new Map(notedChores(stateDir).map((c) => [c.file, c] as const));
  for (const file of done) byFile.delete(file);
  for (const f of failed) {
    const prior = byFile.get(f.file);
    byFile.delete(f.file);
    byFile.set(f.file, {
      ...f,
      failures: (prior?.failures ?? 0) + 1,
      firstAt: prior?.firstAt ?? now,
      lastAt: now,
    });
  }
  const noted = [...byFile.values()].slice(-MAX_NOTED);
  try {
    if (noted.length === 0) fs.rmSync(noteFile(stateDir), { force: true });
    else writeFileAtomic(noteFile(stateDir), `${JSON.stringify(noted, null, 1)}\n`, 'housekeeping', undefined, 'none');
  } catch {
    // A state directory that cannot take the note cannot take much else: the log above has the failures.
  }
  return noted;
}

/** What an error says, for a note (a StateIoError already names the file and the errno). */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Whether a chore's failure is the file system's (or the state lock's, held too long by another process): noted and
 * retried later. Anything else — a bug, a test build's crash point — is thrown as it would be anywhere.
 */
export function isHousekeepingFailure(e: unknown): boolean {
  return e instanceof StateIoError || e instanceof StateLockTimeoutError;
}

// ---- a state directory's chores (the store's housekeeping) ----

/** What a chore is noted with: its state directory, clock and log. */
export interface ChoreContext {
  readonly dir: string;
  readonly now: () => number;
  readonly log: HousekeepingLog | undefined;
}

/**
 * Runs a removal that only tidies: its failure is noted, not thrown. True when it was done (or there was nothing to
 * do).
 */
export function chore(c: ChoreContext, what: string, file: string, run: () => unknown, deleteFile = false): boolean {
  try {
    run();
    return true;
  } catch (e) {
    choreFailed(c, e, what, file, deleteFile);
    return false;
  }
}

/** A chore's failure noted (logged, counted by the service, retried later), or thrown when it is not housekeeping's. */
export function choreFailed(c: ChoreContext, e: unknown, what: string, file: string, deleteFile = false): void {
  // File-system trouble only: anything else (a bug, a test's crash point) is not housekeeping's to swallow.
  if (!isHousekeepingFailure(e)) throw e;
  noteChores(c.dir, [{ what, file, error: errorText(e), ...(deleteFile ? { deleteFile } : {}) }], c.now(), c.log);
}

/** When the whole node was last audited from this state directory (markAudited), or undefined. */
export function lastAudited(stateDir: string): number | undefined {
  try {
    const at = Number(fs.readFileSync(path.join(stateDir, AUDITED), 'utf8'));
    return Number.isFinite(at) && at > 0 ? at : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Best effort: a stamp that cannot be written only means the next ADD audits again. `ensure` creates the state
 * directory first (its failure is the stamp's too).
 */
export function markAudited(stateDir: string, at: number, log: HousekeepingLog | undefined, ensure: () => void): void {
  try {
    ensure();
    fs.writeFileSync(path.join(stateDir, AUDITED), String(at), { mode: 0o600 });
  } catch (e) {
    // read-only or full state: the audit itself is what mattered
    log?.warn(
      { file: path.join(stateDir, AUDITED), err: errorText(e) },
      'could not stamp the whole-node audit as done; the next ADD audits again',
    );
  }
}

/**
 * Deletes a file a noted chore deletes as it is: only a quarantined file or a record set aside by
 * RecordFiles.remove, of this state directory — a note is not trusted to name anything else.
 */
export function deleteNoted(stateDir: string, file: string): void {
  const parts = path.relative(stateDir, file).split(path.sep);
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
