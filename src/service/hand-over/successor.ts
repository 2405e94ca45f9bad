/**
 * Who may be handed the address, and when its "taken" is true (hand-over.ts). Any process of the service's user can
 * connect and speak the hand-over request; a client that is not a service (a script, a stuck tool) must neither make
 * the service let go of its lock nor make it drain into a dead address. So a request carries a proof, checked before
 * anything is released:
 *  - its pid (HCN_CNI_PID) is the process at the other end of the connection (SO_PEERCRED), and its start time
 *    (HCN_CNI_PID_START) is that process's (processStartTime: a pid reused since is another process);
 *  - on Linux, the socket it already bound beside the address (HCN_CNI_SOCKET), to be renamed over it.
 * At "taken" the service looks before it believes: the address names that very socket (same inode: renamed, not
 * another one), someone holds the address's lock (this service let go of it), and whoever listens at the address is
 * that pid, still alive and the same process. Otherwise it serves on.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import type { NativeHcn } from '../../hns/native-types';

/** What a hand-over needs of the addon: the peer's pid and a process's start time. */
export type ProcessProof = Pick<NativeHcn, 'peerCredentials' | 'processStartTime'>;

/** A process that proved it is a new service, as the serving one checked it. */
export interface Successor {
  pid: number;
  /** Its processStartTime token. */
  started: string;
  /** Linux: the socket it bound beside the address (compared by inode at "taken"). */
  socket?: { dev: number; ino: number };
}

/** The request's proof, as a new service sends it (env of the hand-over request). */
export function successorProof(
  native: Pick<NativeHcn, 'processStartTime'>,
  pid: number,
  boundSocket?: string,
): Record<string, string> {
  return {
    HCN_CNI_PID: String(pid),
    HCN_CNI_PID_START: native.processStartTime(pid) ?? '',
    ...(boundSocket !== undefined ? { HCN_CNI_SOCKET: boundSocket } : {}),
  };
}

/** The pid and start time a request claims, checked against the live process; or why it is not believed. */
export function claimedProcess(
  native: Pick<NativeHcn, 'processStartTime'>,
  env: Record<string, string>,
): Successor | string {
  const pid = Number(env.HCN_CNI_PID);
  if (!/^[1-9][0-9]{0,9}$/.test(env.HCN_CNI_PID ?? '') || pid > 2 ** 31 - 1) return 'it gave no pid';
  const started = native.processStartTime(pid);
  if (started === null || !env.HCN_CNI_PID_START || started !== env.HCN_CNI_PID_START)
    return `pid ${pid} does not run as started at the time it gave`;
  return { pid, started };
}

/**
 * Linux: the whole proof of a request read from `socket` (a unix connection to `address`): the peer is the pid it
 * claims, with that start time, and it bound a socket beside the address.
 */
export function provenSuccessor(
  native: ProcessProof,
  address: string,
  socket: net.Socket,
  env: Record<string, string>,
): Successor | string {
  const claimed = claimedProcess(native, env);
  if (typeof claimed === 'string') return claimed;
  const peer = peerPid(native, socket);
  if (peer !== claimed.pid) return `it says it is pid ${claimed.pid}, but pid ${peer ?? '?'} connected`;
  const bound = env.HCN_CNI_SOCKET ?? '';
  if (!bound || path.dirname(path.resolve(bound)) !== path.dirname(path.resolve(address)))
    return 'it names no socket of its own beside the address';
  const st = fs.lstatSync(bound, { throwIfNoEntry: false });
  if (!st?.isSocket()) return `${bound}, the socket it names, is not a socket`;
  return { ...claimed, socket: { dev: st.dev, ino: st.ino } };
}

/**
 * Linux, at "taken": why the address is not the successor's now, or undefined when it is — it names the socket the
 * successor bound, the lock is held (`lockHeld`), and the process listening there is the successor.
 */
export async function notTaken(
  native: ProcessProof,
  address: string,
  s: Successor,
  lockHeld: () => boolean,
): Promise<string | undefined> {
  const st = fs.lstatSync(address, { throwIfNoEntry: false });
  if (!st || !s.socket || st.dev !== s.socket.dev || st.ino !== s.socket.ino)
    return 'the address does not name the socket it bound';
  if (!lockHeld()) return 'nobody holds the address lock';
  const listening = await listenerPid(native, address);
  if (listening !== s.pid) return `the socket at the address is not pid ${s.pid}'s`;
  if (native.processStartTime(s.pid) !== s.started) return `pid ${s.pid} is no longer the process that asked`;
  return undefined;
}

/** The pid at the other end of a connected unix socket, or undefined. */
function peerPid(native: ProcessProof, socket: net.Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  try {
    return native.peerCredentials(fd).pid;
  } catch {
    return undefined;
  }
}

/** The pid of the process listening at the unix socket `address` (the kernel's word, at connect), or undefined. */
function listenerPid(native: ProcessProof, address: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = net.connect(address);
    s.once('connect', () => {
      const pid = peerPid(native, s);
      s.destroy();
      resolve(pid);
    });
    s.once('error', () => resolve(undefined));
  });
}
