/**
 * What install puts on a node, in the order that keeps every moment usable: the standalone executable first, then
 * the shim that runs it when the service is away, then the conflist that makes containerd call the shim. At no
 * moment is there a conflist without its plugin, nor a shim without its standalone executable. Pure: the bytes in,
 * the steps out; src/install/file-install.ts does each step.
 */
import * as path from 'node:path';
import type { CniDirs } from './containerd-config';
import { installFile, type FileOps, type FileOutcome } from './file-install';

export type InstallMode = 'service' | 'standalone';

/** The conflist's file name: containerd loads the first configuration by name, and "10-" sorts before most. */
export const CONFLIST_NAME = '10-hcn-cni.conflist';

export function pluginFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'hcn-cni.exe' : 'hcn-cni';
}

/** The name the shim runs beside itself (native/shim: shim_win.cc, shim_posix.cc). */
export function standaloneFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'hcn-cni-standalone.exe' : 'hcn-cni-standalone';
}

export interface InstallInputs {
  platform: NodeJS.Platform;
  dirs: Pick<CniDirs, 'binDir' | 'confDir'>;
  mode: InstallMode;
  /** The single executable (hcn-cni standalone). */
  executable: Buffer;
  /** The native shim; service mode only. */
  shim?: Buffer;
  /** The rendered conflist (conflist.ts); absent: binaries only. */
  conflist?: string;
}

export interface InstallStep {
  what: 'standalone executable' | 'shim' | 'plugin (standalone)' | 'conflist';
  target: string;
  data: Buffer;
}

export function planInstall(i: InstallInputs): InstallStep[] {
  const steps: InstallStep[] = [];
  const bin = (name: string) => path.join(i.dirs.binDir, name);
  if (i.mode === 'service') {
    if (!i.shim) throw new Error('service mode needs the shim');
    steps.push({ what: 'standalone executable', target: bin(standaloneFileName(i.platform)), data: i.executable });
    steps.push({ what: 'shim', target: bin(pluginFileName(i.platform)), data: i.shim });
  } else {
    steps.push({ what: 'plugin (standalone)', target: bin(pluginFileName(i.platform)), data: i.executable });
  }
  if (i.conflist !== undefined)
    steps.push({ what: 'conflist', target: path.join(i.dirs.confDir, CONFLIST_NAME), data: Buffer.from(i.conflist) });
  return steps;
}

export function applyInstall(ops: FileOps, steps: InstallStep[], stamp: string): Array<FileOutcome & { what: string }> {
  return steps.map((s) => ({ what: s.what, ...installFile(ops, s.data, s.target, stamp) }));
}

/** One line per step, the same for a dry run (what would happen) and a real one (what did). */
export function describeOutcome(o: FileOutcome & { what: string }): string {
  const verb =
    o.action === 'unchanged'
      ? 'is up to date'
      : o.action === 'created'
        ? 'installed'
        : o.action === 'replaced'
          ? 'replaced'
          : `replaced (the running one renamed to ${path.basename(o.aside ?? '')}, removed by the next install)`;
  const extra = [
    ...o.removed.map((f) => `removed leftover ${path.basename(f)}`),
    ...o.kept.map((f) => `kept ${path.basename(f)} (still in use)`),
  ];
  return `${o.what} ${o.target}: ${verb}${extra.length ? `; ${extra.join('; ')}` : ''}`;
}
