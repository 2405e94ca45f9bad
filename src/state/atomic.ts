/**
 * Crash-safe file replacement: write a temp file in the same directory, fsync it, rename it over the target, fsync
 * the directory. A reader sees the old content or the new, never a torn file; after a crash the rename is either
 * durable or did not happen. (Azure CNI renames without fsync, and its state file has been found full of NULs.)
 * How much of that a write pays for is its Durability: only what must survive a power cut pays for both fsyncs.
 */
import * as fs from 'fs';
import * as path from 'path';

/** Called at named points of every write; test builds kill the process there (crash-point matrix). */
export type CrashHook = (point: string) => void;

const isWindows = process.platform === 'win32';
let tmpCounter = 0;

/**
 * On Windows a file another process is reading (or an antivirus scanning) cannot be renamed over or deleted for a
 * moment: EPERM, EACCES or EBUSY. Those are retried briefly there; everywhere else, and for any other error, not.
 */
export function windowsRetry<T>(op: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return op();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (!isWindows || attempt >= 20 || (code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY')) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 * (attempt + 1));
    }
  }
}

/**
 * What a power cut may do to a write (a crash of the process alone loses nothing: the rename is done in the page
 * cache, which other processes read). For readers on a running node the rename makes every level atomic.
 *  - 'full': nothing; the file, then its directory, is fsynced.
 *  - 'content': the file is fsynced before the rename, its directory is not: after a cut the file is whole, old or
 *    absent — never torn.
 *  - 'none': no fsync: after a cut the file may be absent or torn (a claim that only matters while its process runs,
 *    and a power cut ends them all).
 */
export type Durability = 'full' | 'content' | 'none';

export function writeFileAtomic(
  file: string,
  data: string,
  point: string,
  crash?: CrashHook,
  durability: Durability = 'full',
): void {
  const { tmp, fd } = writeTemp(file, data);
  try {
    if (durability !== 'none') fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  crash?.(`${point}:tmp-written`);
  publishTemp(tmp, file, point, crash, durability);
}

/**
 * Creates the temp file beside `file` and writes `data` into it; the descriptor stays open for the fsync. The name is
 * unique per process and write; 'wx' refuses a leftover of a crashed process that had the same pid. A failed write
 * removes the temp file.
 */
function writeTemp(file: string, data: string): { tmp: string; fd: number } {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}-${Date.now().toString(36)}-${++tmpCounter}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, data);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  return { tmp, fd };
}

function publishTemp(tmp: string, file: string, point: string, crash: CrashHook | undefined, durability: Durability) {
  windowsRetry(() => fs.renameSync(tmp, file));
  if (durability === 'full') fsyncDir(path.dirname(file));
  crash?.(`${point}:written`);
}

/**
 * writeFileAtomic in two halves, so that its slow part can run while the caller waits for something else: the temp
 * file is created and written at once, and its fsync (durability 'content' or 'full') runs on the thread pool;
 * `publish` renames it over the target once `ready` has settled. Until then nothing is visible: readers skip temp
 * files (and the store removes stale ones). `discard` removes the temp file of a write that is not to be published.
 */
export interface PreparedWrite {
  readonly file: string;
  /** Settles when the temp file is written as its durability asks; rejects with the fsync's (or close's) error. */
  readonly ready: Promise<void>;
  /** The rename (and directory fsync for 'full'); only after `ready` has resolved. */
  publish(): void;
  /** Removes the temp file, once its fsync is over (resolves then; never rejects). */
  discard(): Promise<void>;
}

export function prepareWrite(
  file: string,
  data: string,
  point: string,
  crash?: CrashHook,
  durability: Durability = 'full',
): PreparedWrite {
  const { tmp, fd } = writeTemp(file, data);
  let synced = false;
  const ready = new Promise<void>((resolve, reject) => {
    const close = (err: NodeJS.ErrnoException | null) =>
      fs.close(fd, (closeErr) => {
        const e = err ?? closeErr;
        if (e) return reject(e);
        try {
          crash?.(`${point}:tmp-written`);
        } catch (hook) {
          return reject(hook); // as in writeFileAtomic, a hook that throws fails the write (not the process)
        }
        synced = true;
        resolve();
      });
    if (durability === 'none') close(null);
    else fs.fsync(fd, close);
  });
  ready.catch(() => undefined); // the caller awaits it; a discarded write's failure is nobody's
  let done = false;
  return {
    file,
    ready,
    publish() {
      if (!synced || done) throw new Error(`bug: publishing ${file} before its temp file is ready, or twice`);
      publishTemp(tmp, file, point, crash, durability); // a failed rename may be tried again (record-files.ts publish)
      done = true;
    },
    async discard() {
      if (done) return;
      done = true;
      // After the fsync (an open descriptor is still writing it); the caller awaits this, so a process that exits
      // right after its verb leaves nothing behind.
      await ready.catch(() => undefined);
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // Left as a stale temp file: readers skip it and the store removes it later.
      }
    },
  };
}

/**
 * Removes a file; a missing file is fine. Returns whether it existed. `durable: false` skips the directory fsync
 * where a removal lost to a power cut is harmless (an intent whose process is gone claims nothing).
 */
export function removeFile(file: string, point: string, crash?: CrashHook, durable = true): boolean {
  crash?.(`${point}:before-remove`);
  try {
    windowsRetry(() => fs.unlinkSync(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  if (durable) fsyncDir(path.dirname(file));
  crash?.(`${point}:removed`);
  return true;
}

/** Windows cannot open a directory to fsync it; there NTFS journals the rename itself. */
export function fsyncDir(dir: string): void {
  if (isWindows) return;
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
