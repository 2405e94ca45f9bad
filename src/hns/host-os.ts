/**
 * The two OS facilities the state layer needs from the addon, because Windows has no other way to them from Node:
 * a file lock the kernel drops when its holder dies, and a process start time to tell a live pid from a reused one.
 * Kept behind this small interface so the state layer never touches the addon itself.
 */
import { loadNative, type LoadOptions } from './native';
import type { NativeHcn } from './native-types';

export interface HostOs {
  /** A lock handle, or null when another holder (this process or another) has the lock. */
  tryLockFile(path: string): number | null;
  unlockFile(handle: number): void;
  /** Opaque token for "pid as started at T", or null when the process does not exist. */
  processStartTime(pid: number): string | null;
}

export function hostOs(native?: NativeHcn, load?: LoadOptions): HostOs {
  const n = native ?? loadNative(load).native;
  return {
    tryLockFile: (p) => n.tryLockFile(p),
    unlockFile: (h) => n.unlockFile(h),
    processStartTime: (pid) => n.processStartTime(pid),
  };
}
