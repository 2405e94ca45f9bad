/**
 * File-system trouble in the state directory, said plainly: which path, what is wrong with it, and the errno code —
 * never a stack trace (the runtime shows the message to an operator). The plugin turns it into CNI error 5.
 */
import * as fs from 'fs';
import * as path from 'path';

export class StateIoError extends Error {
  override readonly name = 'StateIoError';
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly errno: string | undefined,
  ) {
    super(`${file}: ${problem}${errno ? ` (${errno})` : ''}`);
  }
}

const PROBLEMS: Record<string, string> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENAMETOOLONG: 'the name is too long for the file system',
  EIO: 'input/output error from the device',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files on the system',
};

/**
 * The first existing ancestor of `file` (or the file itself) that is not a directory, when a path component being
 * a file is what broke the operation (ENOTDIR, EEXIST from mkdir).
 */
function fileInTheWay(file: string): string | undefined {
  const parts: string[] = [];
  for (let p = path.dirname(file); ; p = path.dirname(p)) {
    parts.unshift(p);
    if (path.dirname(p) === p) break;
  }
  for (const p of parts) {
    try {
      if (!fs.lstatSync(p).isDirectory()) return p;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Wraps an errno failure on `file` (anything else passes through unchanged). */
export function stateIoError(e: unknown, file: string, doing: string): unknown {
  if (e instanceof StateIoError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    const inTheWay = fileInTheWay(path.join(file, 'x'));
    if (inTheWay)
      return new StateIoError(
        inTheWay,
        `is a file where the state directory needs a directory (${doing} ${file})`,
        code,
      );
  }
  if (code === 'EISDIR') return new StateIoError(file, `is a directory where the state needs a file (${doing})`, code);
  return new StateIoError(file, `${PROBLEMS[code] ?? (e as Error).message} (${doing})`, code);
}

/** Runs a file-system step of the store, naming the path when it fails. */
export function onState<T>(file: string, doing: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw stateIoError(e, file, doing);
  }
}
