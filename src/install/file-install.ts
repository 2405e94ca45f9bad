/**
 * One file put in place so that the runtime never finds it missing nor half-written: written and fsynced under a
 * temporary name in the target's own directory (same volume), then renamed over the target. libcni loads only
 * .conf/.conflist/.json and runs only the plugin's exact name, so a temporary name is never seen.
 *
 * Windows refuses to replace an executable that is running (a shim serving a request, the standalone executable
 * running a verb or the service): the rename over it fails with EPERM/EACCES/EBUSY, while renaming it is allowed.
 * Then the running one is renamed aside to `<name>.old-<time>` and the new one renamed into place — two renames in one
 * directory, back to back; if the second fails, the first is undone. Leftover `.old-*` and `.tmp-*` files are removed
 * by the next install (or uninstall) once nothing runs them. The same rule as the DaemonSet's PowerShell installer had
 * ([System.IO.File]::Replace with a backup name), now in one place that the suite runs.
 */
import * as path from 'node:path';
import { InstallRefusal } from './refusal';

/** The file operations install needs; src/cli gives the real ones (node:fs), tests can make a target "in use". */
export interface FileOps {
  /** The file's bytes, or undefined when there is none. */
  read(file: string): Buffer | undefined;
  /** Create (exclusively) and fsync. */
  writeNew(file: string, data: Buffer): void;
  rename(from: string, to: string): void;
  unlink(file: string): void;
  list(dir: string): string[];
  mkdirp(dir: string): void;
}

export type FileAction = 'unchanged' | 'created' | 'replaced' | 'replaced-aside';

export interface FileOutcome {
  target: string;
  action: FileAction;
  /** The running file's new name when it could not be replaced. */
  aside?: string;
  /** Leftovers of earlier installs removed; and those still in use (kept for the next run). */
  removed: string[];
  kept: string[];
}

const IN_USE = new Set(['EPERM', 'EACCES', 'EBUSY']);

function code(e: unknown): string {
  return String((e as NodeJS.ErrnoException).code ?? (e as Error).message);
}

/** Leftovers of earlier installs of `target` in its directory. */
export function leftovers(ops: FileOps, target: string): string[] {
  const dir = path.dirname(target);
  const base = path.basename(target).toLowerCase();
  let names: string[];
  try {
    names = ops.list(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => {
      const l = n.toLowerCase();
      return l.startsWith(`${base}.old-`) || l.startsWith(`${base}.tmp-`);
    })
    .map((n) => path.join(dir, n));
}

function sweepLeftovers(ops: FileOps, target: string): { removed: string[]; kept: string[] } {
  const removed: string[] = [];
  const kept: string[] = [];
  for (const f of leftovers(ops, target)) {
    try {
      ops.unlink(f);
      removed.push(f);
    } catch {
      kept.push(f);
    }
  }
  return { removed, kept };
}

export function installFile(ops: FileOps, data: Buffer, target: string, stamp: string): FileOutcome {
  try {
    ops.mkdirp(path.dirname(target));
  } catch (e) {
    throw new InstallRefusal(`cannot create ${path.dirname(target)}: ${code(e)}`);
  }
  const { removed, kept } = sweepLeftovers(ops, target);
  let existing: Buffer | undefined;
  try {
    existing = ops.read(target);
  } catch (e) {
    // A directory where the file goes (EISDIR), a file where a directory should be (ENOTDIR), no permission.
    throw new InstallRefusal(`cannot read ${target}: ${code(e)}`);
  }
  if (existing !== undefined && existing.equals(data)) return { target, action: 'unchanged', removed, kept };
  const tmp = `${target}.tmp-${stamp}`;
  try {
    ops.writeNew(tmp, data);
  } catch (e) {
    throw new InstallRefusal(`cannot write ${tmp}: ${code(e)}`);
  }
  try {
    ops.rename(tmp, target);
    return { target, action: existing === undefined ? 'created' : 'replaced', removed, kept };
  } catch (e) {
    if (existing === undefined || !IN_USE.has(code(e))) {
      tryUnlink(ops, tmp);
      throw new InstallRefusal(`cannot put ${target} in place: ${code(e)}`);
    }
  }
  // In use: move the running file aside, then the new one in.
  const aside = `${target}.old-${stamp}`;
  try {
    ops.rename(target, aside);
  } catch (e) {
    tryUnlink(ops, tmp);
    throw new InstallRefusal(`${target} is in use and cannot be renamed aside either: ${code(e)}`);
  }
  try {
    ops.rename(tmp, target);
  } catch (e) {
    ops.rename(aside, target);
    tryUnlink(ops, tmp);
    throw new InstallRefusal(`cannot put ${target} in place (the running one is back): ${code(e)}`);
  }
  return { target, action: 'replaced-aside', aside, removed, kept };
}

function tryUnlink(ops: FileOps, f: string): void {
  try {
    ops.unlink(f);
  } catch {
    // best effort: the next install removes it
  }
}
