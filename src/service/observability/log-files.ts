/**
 * The service's open log files (`logFile` of the requests it runs), kept open between requests — a resident process
 * must not open a descriptor per request — but:
 *  - reopened when the path no longer names the open file: logrotate without copytruncate renames it, an operator
 *    or a log shipper deletes it; the path's identity (device and inode, lstat against fstat) is checked when a
 *    request takes the file and, within a long request, at most once per `checkEveryMs` of writing, so a rotated
 *    log gets a new file and a deleted one does not keep its disk space;
 *  - bounded: at most `maxOpen` files are open (the least recently used is closed first; it reopens when written to
 *    again), so templated paths (one per pod) cannot exhaust the service's descriptors.
 * Every write goes through the LogFile, which holds the only reference to its descriptor: a descriptor is never used
 * after it is closed, so a number the kernel reuses for another file is never written to by mistake.
 */
import * as fs from 'fs';
import { FdStream, openLogFile } from '../../log/logger';

export interface LogFilesOptions {
  maxOpen?: number;
  checkEveryMs?: number;
  now?: () => number;
}

export class LogFiles {
  /** Open files, least recently used first (a Map keeps insertion order). */
  private readonly open = new Map<string, LogFile>();
  readonly maxOpen: number;
  readonly checkEveryMs: number;
  readonly now: () => number;

  constructor(options: LogFilesOptions = {}) {
    this.maxOpen = options.maxOpen ?? 16;
    this.checkEveryMs = options.checkEveryMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The destination for `path` (a stream whose writes never throw: FdStream's rules), for one request. The open
   * file's identity is checked here, so a request after a rotation writes to the new file however soon it comes.
   */
  get(path: string): LogFile {
    const file = this.open.get(path);
    if (!file) return new LogFile(path, this);
    file.recheck();
    return file;
  }

  /** How many descriptors are open (for `hcn-cni service` and tests). */
  get openCount(): number {
    return this.open.size;
  }

  /** `file` has just been opened or used: most recently used now; close the oldest beyond the bound. */
  touched(file: LogFile): void {
    const other = this.open.get(file.path);
    if (other && other !== file) other.close();
    this.open.delete(file.path);
    this.open.set(file.path, file);
    for (const [path, oldest] of this.open) {
      if (this.open.size <= this.maxOpen) break;
      this.open.delete(path);
      oldest.close();
    }
  }

  closed(file: LogFile): void {
    if (this.open.get(file.path) === file) this.open.delete(file.path);
  }

  closeAll(): void {
    for (const f of [...this.open.values()]) f.close();
  }
}

export class LogFile {
  private fd: number | undefined;
  private stream: FdStream | undefined;
  private checkedAt = 0;
  /** When opening last failed: tried again only after checkEveryMs, so a broken path warns once, not per line. */
  private failedAt: number | undefined;

  constructor(
    readonly path: string,
    private readonly pool: LogFiles,
  ) {}

  write(line: string): boolean {
    const now = this.pool.now();
    if (now - this.checkedAt >= this.pool.checkEveryMs) this.recheck();
    if (this.fd === undefined) {
      if (this.failedAt !== undefined && now - this.failedAt < this.pool.checkEveryMs) return true;
      const fd = openLogFile(this.path);
      if (fd === undefined) {
        this.failedAt = now; // openLogFile has warned; the line still reaches the shim's stderr
        return true;
      }
      this.failedAt = undefined;
      this.fd = fd;
      this.stream = new FdStream(fd, this.path);
      this.checkedAt = now;
    }
    this.pool.touched(this);
    return this.stream!.write(line);
  }

  /** Closes the file if its path no longer names it (the next write opens the path afresh). */
  recheck(): void {
    if (this.fd === undefined) return;
    this.checkedAt = this.pool.now();
    if (!this.pathStillNamesIt()) this.close();
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already unusable; nothing to release
    }
    this.fd = undefined;
    this.stream = undefined;
    this.pool.closed(this);
  }

  private pathStillNamesIt(): boolean {
    try {
      const atPath = fs.lstatSync(this.path);
      const open = fs.fstatSync(this.fd!);
      return atPath.dev === open.dev && atPath.ino === open.ino;
    } catch {
      return false;
    }
  }
}
