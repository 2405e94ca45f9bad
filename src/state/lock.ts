/**
 * The state lock: an OS file lock (fcntl OFD lock / LockFileEx, from the addon) that the kernel releases when its
 * holder dies, so a killed CNI process can never leave it stuck (Azure CNI's PID-file locks did: their #445, #1035).
 *
 * The critical section is a synchronous function on purpose: no HNS or IPAM call can happen while the lock is held,
 * because nothing can be awaited inside it. Parallel pods therefore only ever wait for each other's file writes.
 */
import * as fs from 'fs';
import type { HostOs } from '../hns/host-os';
import { StateIoError } from './io-error';

export class StateLockTimeoutError extends Error {
  override readonly name = 'StateLockTimeoutError';
}

type NotPromise<T> = T extends PromiseLike<unknown> ? never : T;

export class StateLock {
  constructor(
    private readonly file: string,
    private readonly os: HostOs,
    private readonly timeoutMs = 10_000,
  ) {}

  async run<T>(critical: () => NotPromise<T>): Promise<T> {
    const handle = await this.acquire();
    try {
      const result = critical();
      if (result && typeof (result as { then?: unknown }).then === 'function') {
        throw new Error('bug: asynchronous work inside the state lock');
      }
      return result;
    } finally {
      this.os.unlockFile(handle);
    }
  }

  /** The addon's errors carry an errno number only; say what is wrong with the path instead. */
  private tryLock(): number | null {
    try {
      return this.os.tryLockFile(this.file);
    } catch (e) {
      let problem = (e as Error).message;
      try {
        const st = fs.lstatSync(this.file);
        if (!st.isFile())
          problem = `is ${st.isDirectory() ? 'a directory' : 'not a regular file'}; the state lock must be a file (${problem})`;
      } catch {
        // Missing, or its directory is unusable: the addon's message says which.
      }
      throw new StateIoError(this.file, problem, undefined);
    }
  }

  private async acquire(): Promise<number> {
    const start = Date.now();
    let wait = 1;
    for (;;) {
      const h = this.tryLock();
      if (h !== null) return h;
      if (Date.now() - start > this.timeoutMs) {
        throw new StateLockTimeoutError(`state lock ${this.file} still held after ${this.timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 25);
    }
  }
}
