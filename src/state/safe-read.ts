/**
 * Reading a state file so that no file placed in the state directory can hang, exhaust or crash a verb: a record
 * is a small regular file, and anything else at a record's path (a directory, a FIFO, a device, a symlink to any of
 * them, a file larger than any record) is reported as bad so the store can quarantine it. Symlinks are not followed
 * (O_NOFOLLOW; lstat first where the platform has no O_NOFOLLOW), the open does not block (O_NONBLOCK: a FIFO
 * without a writer would block the open itself), and at most MAX_STATE_FILE_BYTES + 1 bytes are read (a symlink to
 * /dev/zero used to grow memory without bound).
 */
import * as fs from 'fs';

/** Records are a few KiB (the largest holds one CNI result); 1 MiB is far beyond any of them. */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;

export type StateFileRead = { kind: 'missing' } | { kind: 'text'; text: string } | { kind: 'bad'; reason: string };

const C = fs.constants;
const OPEN_FLAGS = C.O_RDONLY | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0);

function what(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

export function readStateFile(file: string, maxBytes = MAX_STATE_FILE_BYTES): StateFileRead {
  let fd: number;
  try {
    if (C.O_NOFOLLOW === undefined) {
      const st = fs.lstatSync(file);
      if (!st.isFile()) return { kind: 'bad', reason: `${what(st)}, not a regular file` };
    }
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    // O_NOFOLLOW on a symlink: ELOOP (Linux) or EMLINK/EFTYPE (BSDs).
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE')
      return { kind: 'bad', reason: 'a symbolic link, not a regular file' };
    if (code === 'EISDIR') return { kind: 'bad', reason: 'a directory, not a regular file' };
    // A FIFO without a writer opens fine with O_NONBLOCK; a socket refuses the open.
    if (code === 'ENXIO' || code === 'EOPNOTSUPP')
      return { kind: 'bad', reason: 'a socket or device, not a regular file' };
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: 'bad', reason: `${what(st)}, not a regular file` };
    if (st.size > maxBytes) return { kind: 'bad', reason: `${st.size} bytes, more than any record (${maxBytes})` };
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n === buf.length) break;
    }
    if (n > maxBytes) return { kind: 'bad', reason: `more than ${maxBytes} bytes, more than any record` };
    return { kind: 'text', text: buf.subarray(0, n).toString('utf8') };
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether anything is at the path: a symbolic link counts as itself, never followed (a dangling one is there too). */
export function entryExists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}
