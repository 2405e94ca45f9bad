/**
 * Where the service listens, and who can reach it.
 *
 * Linux: a unix socket, created with mode 0600 (umask while binding, chmod after) in a directory this function
 * creates 0700; the service also checks each peer's uid before reading (service.ts). A socket file left by a dead
 * service is replaced; a service of ours serving there is asked to hand over (hand-over.ts); anything else that
 * answers is an error (two services would each think they own the in-flight work).
 *
 * Windows: a named pipe (\\.\pipe\hcn-cni) served by the addon (listenPipe, native/addon/pipe_server_win.cc), not
 * by Node's net.Server: Node creates its pipes with Windows' default security descriptor, which grants read access
 * to Everyone and Anonymous (https://learn.microsoft.com/en-us/windows/win32/ipc/named-pipe-security-and-access-rights),
 * and never says who connected. The native server
 *  - gives every instance a protected DACL granting GENERIC_ALL to SYSTEM and BUILTIN\Administrators only (SDDL
 *    D:P(A;;GA;;;SY)(A;;GA;;;BA)), so no one else may open the pipe or create an instance of it;
 *  - refuses to start if a pipe of that name exists (WaitNamedPipeW, then FILE_FLAG_FIRST_PIPE_INSTANCE), so neither
 *    a second service nor a squatter that created the name first can take the clients — unless a service of ours
 *    serving it agreed to hand it over (listenPipeTakingOver): then it checks that the pipe's server is that service
 *    and adds its own instances to the pipe, and the old one closes its instances once told "taken";
 *  - sets PIPE_REJECT_REMOTE_CLIENTS;
 *  - checks each client's token (ImpersonateNamedPipeClient → OpenThreadToken → CheckTokenMembership →
 *    RevertToSelf) against the allowed SIDs before anything is read, and disconnects a client that holds none;
 *  - hands an accepted pipe to Node as a socket (uv_open_osfhandle → net.Socket({ fd })), so the protocol code is
 *    the same on both systems.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { randomBytes } from 'crypto';
import { queryStatus } from './client';
import { askHandOver, type HandOverClaim, type HandOverPort } from '../hand-over/hand-over';
import { claimedProcess, notTaken, provenSuccessor, successorProof, type ProcessProof } from '../hand-over/successor';
import type { NativeHcn, NativePipeServer } from '../../hns/native-types';

/** A Windows pipe name rather than a unix socket path. */
export function isPipe(address: string): boolean {
  return address.startsWith('\\\\.\\pipe\\') || address.startsWith('//./pipe/');
}

/** True if something accepts connections at `address`. */
export function answers(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(address);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * What the unix listener needs of the addon: its OS file lock (fcntl OFD lock), which the kernel releases when its
 * holder dies, and the peer and start-time checks of a hand-over (successor.ts).
 */
export type ListenNative = Pick<NativeHcn, 'tryLockFile' | 'unlockFile'> & ProcessProof;

/**
 * The address's lock: beside the socket's directory, not in it (/run/hcn-cni/service.sock →
 * /run/hcn-cni.service.sock.lock), so that `rm -rf` of that directory (a tmpfiles cleaner, an operator) takes the
 * socket but not the lock, and a second service is still refused while the first one lives. (Windows has no lock: a
 * pipe's name is the kernel's, alive while an instance is open, and nothing in the file system deletes it;
 * FILE_FLAG_FIRST_PIPE_INSTANCE keeps a second server out.)
 */
export function addressLockFile(address: string): string {
  const dir = path.dirname(path.resolve(address));
  return path.join(path.dirname(dir), `${path.basename(dir)}.${path.basename(address)}.lock`);
}

/** The unix socket listener of a service (Linux): its stop, and what a hand-over to a new service needs. */
export interface UnixListening extends HandOverPort {
  /**
   * Stops accepting. After a hand-over the address names the new service's socket and is left alone; otherwise it is
   * removed if it still names this one's. Connections already queued on the socket are accepted first (a hand-over:
   * they connected before the rename and are this service's to serve). Resolves once the socket is closed, before the
   * connections have ended; then the lock is released.
   */
  close(handedOver: boolean): Promise<void>;
}

/**
 * Linux: `server` on the unix socket `address` with `mode`. Another service holding the address lock
 * (addressLockFile) is asked to hand the address over (hand-over.ts) when `takeOver` is given, else — or when it does
 * not hand over — the start is refused. The lock is what keeps a second service out when the first one's socket file
 * was deleted under it (a tmpfiles cleaner, `rm -rf /run/hcn-cni`): nothing answers at the path then, but two services
 * would each think they own the in-flight work. Without the lock held by anyone, a socket that answers is not a
 * service of ours (or one too old to lock): refused too.
 *
 * The socket is bound at a temporary name in the address's directory and renamed over the address, never bound at the
 * address itself: a rename is atomic, so the address names the old socket or the new one at every moment; and libuv
 * unlinks the path a server was bound to when it closes, which must not be the address once a new service's socket is
 * there. Taking over, the temporary socket is bound before asking: it is part of the proof (successor.ts).
 */
export async function listenExclusive(
  server: net.Server,
  address: string,
  mode: number,
  native?: ListenNative,
  takeOver?: { pid: number },
): Promise<UnixListening> {
  if (isPipe(address)) throw new Error(`listenExclusive is for unix sockets; ${address} is a pipe (listenPipe)`);
  fs.mkdirSync(path.dirname(address), { recursive: true, mode: 0o700 });
  const lockFile = addressLockFile(address);
  const first = native?.tryLockFile(lockFile);
  let lock: AddressLock;
  let ours: { dev: number; ino: number };
  if (first !== null) {
    lock = new AddressLock(native, lockFile, first);
    try {
      await refuseUnlessStale(address);
      ours = renameOver(server, await bindTemp(server, address, mode), address);
    } catch (e) {
      lock.release();
      throw e;
    }
  } else ({ lock, ours } = await takeAddressOver(server, address, mode, native!, lockFile, takeOver));
  return unixListening(server, address, mode, native, lock, ours);
}

/** The listener's hand-over port and stop, over the socket `ours` at `address` and its lock. */
function unixListening(
  server: net.Server,
  address: string,
  mode: number,
  native: ListenNative | undefined,
  lock: AddressLock,
  ours: { dev: number; ino: number },
): UnixListening {
  return {
    successor: (socket, env) =>
      native ? provenSuccessor(native, address, socket, env) : 'this service cannot check who asks',
    releaseLock: lock.release,
    notTaken: (s) => notTaken(native!, address, s, () => !lock.free()),
    resume: async (onLost) => {
      if (namesSocket(address, ours)) {
        // Another process may hold the lock for a moment (a second new service trying its luck): this service's
        // socket is still the address's, so it serves on and takes the lock back once it is free.
        if (!lock.retake())
          lock.retakeWhenFree(
            () => namesSocket(address, ours),
            () => onLost('another socket is at the address while its lock is held by another process'),
          );
        return true;
      }
      if (!lock.retake()) return false;
      try {
        server.close(); // its socket is unreachable (no longer at the address); a fresh one takes its place
        ours = renameOver(server, await bindTemp(server, address, mode), address);
        return true;
      } catch {
        return false;
      }
    },
    close: async (handedOver) => {
      if (handedOver) await acceptQueued(server);
      else if (lock.holding && namesSocket(address, ours)) {
        fs.rmSync(address, { force: true });
      }
      // Resolves once every connection has ended too (net.Server close); the lock is held until then.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      lock.release();
    },
  };
}

/**
 * Accepts every connection queued on a handed-over socket before it closes: they connected before the rename and are
 * this service's to serve (closing would reset them, and their shims would run the standalone executable). Node
 * accepts one connection of a listening unix socket per turn of its loop (measured on Node 20: ten queued, two
 * setImmediates, two accepted), so this waits for a turn that accepted none: the queue is empty then, and stays so,
 * since the address names the new service's socket and nothing else can reach this one.
 */
async function acceptQueued(server: net.Server): Promise<void> {
  let accepted = 0;
  const count = (): void => void accepted++;
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  server.on('connection', count);
  try {
    await turn(); // now in a check phase: each turn from here includes a poll phase, where accepting happens
    for (let before = -1; before !== accepted;) {
      before = accepted;
      await turn();
    }
  } finally {
    server.off('connection', count);
  }
}

/**
 * Another service holds the address lock: binds this one's socket beside the address, asks that one to hand the
 * address over with the proof (when `takeOver` is given), takes the lock once it has let go, renames the socket over
 * the address and says "taken". Refuses otherwise.
 */
async function takeAddressOver(
  server: net.Server,
  address: string,
  mode: number,
  native: ListenNative,
  lockFile: string,
  takeOver: { pid: number } | undefined,
): Promise<{ lock: AddressLock; ours: { dev: number; ino: number } }> {
  const held = `another hcn-cni service holds ${lockFile} (its socket may have been deleted)`;
  if (!takeOver) throw new Error(`${held}: no hand-over asked (--no-take-over)`);
  const temp = await bindTemp(server, address, mode);
  try {
    const asked = await askHandOver(address, successorProof(native, takeOver.pid, path.resolve(temp)));
    if (typeof asked === 'string') throw new Error(`${held}: ${asked}`);
    // The old service released the lock before it said so: it is free unless another process took it meanwhile.
    const again = native.tryLockFile(lockFile);
    if (again === null) {
      asked.abandon();
      throw new Error(`another hcn-cni service took ${lockFile} during the hand-over`);
    }
    const lock = new AddressLock(native, lockFile, again);
    let ours: { dev: number; ino: number };
    try {
      ours = renameOver(server, temp, address);
    } catch (e) {
      asked.abandon();
      lock.release();
      throw e;
    }
    asked.taken();
    return { lock, ours };
  } catch (e) {
    server.close();
    fs.rmSync(temp, { force: true });
    throw e;
  }
}

/** How often a service whose lock another process took for a moment tries to take it back. */
const LOCK_RETRY_MS = 200;

/** The address lock as this service holds it: let go of at a hand-over's "released", taken back if it does not complete. */
class AddressLock {
  /** Whether this service holds the address (its lock, when there are locks): false from a hand-over's release on. */
  holding = true;
  private retrying: NodeJS.Timeout | undefined;

  constructor(
    private readonly locks: ListenNative | undefined,
    private readonly file: string,
    private held: number | undefined,
  ) {}

  readonly release = (): void => {
    this.stopRetrying();
    if (this.held !== undefined) this.locks!.unlockFile(this.held);
    this.held = undefined;
    this.holding = false;
  };

  /** Takes the lock back; false if another process holds it now. */
  retake(): boolean {
    if (this.holding) return true;
    const again = this.locks?.tryLockFile(this.file);
    if (again === null) return false;
    this.held = again;
    this.holding = true;
    return true;
  }

  /** True if nobody holds the lock (this service does not: it released it). */
  free(): boolean {
    const probe = this.locks?.tryLockFile(this.file);
    if (probe === null) return false;
    if (probe !== undefined) this.locks!.unlockFile(probe);
    return true;
  }

  /** Retakes the lock once it is free, while `stillOurs()`; `lost()` when that stops being true first. */
  retakeWhenFree(stillOurs: () => boolean, lost: () => void): void {
    this.stopRetrying();
    this.retrying = setInterval(() => {
      if (!stillOurs()) {
        this.stopRetrying();
        lost();
      } else if (this.retake()) this.stopRetrying();
    }, LOCK_RETRY_MS);
    this.retrying.unref();
  }

  private stopRetrying(): void {
    clearInterval(this.retrying);
    this.retrying = undefined;
  }
}

/** Binds `server` at a temporary name beside `address`, never wider than `mode`; returns that name. */
async function bindTemp(server: net.Server, address: string, mode: number): Promise<string> {
  const temp = path.join(path.dirname(address), `.hcn-cni-${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  // The socket must never exist with a wider mode than asked, not even between bind() and chmod().
  const old = process.umask(0o777 & ~mode);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(temp, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(old);
  }
  try {
    fs.chmodSync(temp, mode);
  } catch (e) {
    server.close();
    fs.rmSync(temp, { force: true });
    throw e;
  }
  return temp;
}

/** Renames the bound socket `temp` over `address` (atomic); its identity, to know later whether it is still there. */
function renameOver(server: net.Server, temp: string, address: string): { dev: number; ino: number } {
  try {
    const st = fs.lstatSync(temp);
    fs.renameSync(temp, address);
    return { dev: st.dev, ino: st.ino };
  } catch (e) {
    server.close();
    fs.rmSync(temp, { force: true });
    throw e;
  }
}

/** True if `address` is still the socket `id` (not replaced by a new service's, not deleted). */
function namesSocket(address: string, id: { dev: number; ino: number }): boolean {
  try {
    const st = fs.lstatSync(address);
    return st.dev === id.dev && st.ino === id.ino;
  } catch {
    return false;
  }
}

/**
 * What may be at the address before the service binds it: nothing, or the socket of a service that has died (the
 * rename replaces it). Anything else is the operator's (a file named by a typo or a wrong variable, a symlink, a
 * directory): the service refuses to start rather than replace it, and a socket that answers is a running server.
 */
async function refuseUnlessStale(address: string): Promise<void> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(address);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!st.isSocket()) {
    const what = st.isSymbolicLink()
      ? 'a symbolic link'
      : st.isDirectory()
        ? 'a directory'
        : st.isFile()
          ? 'a regular file'
          : 'not a socket';
    throw new Error(
      `${address} is ${what}, not a socket a service left: refusing to replace it (remove it, or choose another --listen)`,
    );
  }
  if (await answers(address)) throw new Error(`another hcn-cni service is already listening on ${address}`);
}

/** SYSTEM and BUILTIN\Administrators: who may talk to the service on Windows (the pipe's DACL grants only them). */
export const SERVICE_SIDS: readonly string[] = ['S-1-5-18', 'S-1-5-32-544'];

export interface PipeListenOptions {
  address: string;
  native: Pick<NativeHcn, 'listenPipe' | 'processStartTime'>;
  /** Whose tokens may connect (any one of them, enabled, in the client's token). */
  allowSids: readonly string[];
  onConnection(socket: net.Socket): void;
  onRefused(who: { reason: string; pid: number | null; user: string | null }): void;
  onError(message: string): void;
  /** A hand-over: the pid of the service of ours that serves the pipe and agreed to hand it over. */
  joinPid?: number;
}

/**
 * Windows: the native pipe server, taking the pipe over (hand-over.ts) from a service of ours that serves it when
 * `takeOver` is given. The old service agrees over the pipe (the same request as on Linux; "released" means it
 * agreed: there is no lock); this one then adds its instances to the pipe, after the addon checked that the pipe's
 * server is the service that agreed, and says "taken"; the old one closes its instances. Both have instances waiting
 * from then until the old one closes its own: a client always finds one. A service that does not hand over (another
 * version) is refused as before, as is any pipe of that name when `takeOver` is absent (--no-take-over).
 */
export async function listenPipeTakingOver(
  options: PipeListenOptions,
  takeOver?: { pid: number },
): Promise<{ pipe: NativePipeServer; port: HandOverPort }> {
  let claim: HandOverClaim | undefined;
  let joinPid: number | undefined;
  const serving = takeOver ? await queryStatus(options.address).catch(() => undefined) : undefined;
  if (takeOver && serving) {
    const asked = await askHandOver(options.address, successorProof(options.native, takeOver.pid));
    if (typeof asked === 'string')
      throw new Error(`another hcn-cni service is listening on ${options.address}: ${asked}`);
    claim = asked;
    joinPid = serving.pid;
  }
  let pipe: NativePipeServer;
  try {
    pipe = listenPipe({ ...options, ...(joinPid !== undefined ? { joinPid } : {}) });
  } catch (e) {
    claim?.abandon();
    throw e;
  }
  claim?.taken();
  // The old service's side: agreeing releases nothing (no lock), and its instances stay until "taken", so a
  // hand-over that does not complete leaves it serving as it was. Who asks is checked by its pid and start time
  // (the pipe server does not say which process connected); what "taken" claims is not looked at here.
  const port: HandOverPort = {
    successor: (_socket, env) => claimedProcess(options.native, env),
    releaseLock: () => undefined,
    notTaken: () => Promise.resolve(undefined),
    resume: () => Promise.resolve(true),
  };
  return { pipe, port };
}

/** Windows: the native pipe server (see the header); accepted clients arrive as net.Sockets. */
export function listenPipe(options: PipeListenOptions): NativePipeServer {
  const native = options.joinPid !== undefined ? [{ joinPid: options.joinPid }] : [];
  return options.native.listenPipe(
    options.address,
    options.allowSids,
    (event) => {
      if (event.type === 'connection') {
        let socket: net.Socket;
        try {
          socket = new net.Socket({ fd: event.fd, readable: true, writable: true });
        } catch (e) {
          fs.closeSync(event.fd); // closes the pipe handle with it: the client sees the pipe close, unanswered
          options.onError(`an accepted pipe could not be opened as a socket: ${(e as Error).message}`);
          return;
        }
        options.onConnection(socket);
      } else if (event.type === 'refused')
        options.onRefused({ reason: event.reason, pid: event.pid, user: event.user });
      else options.onError(event.message);
    },
    ...native,
  );
}
