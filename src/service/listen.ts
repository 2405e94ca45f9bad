/**
 * Where the service listens, and who can reach it.
 *
 * Linux: a unix socket, created with mode 0600 (umask while binding, chmod after) in a directory this function
 * creates 0700; the service also checks each peer's uid before reading (service.ts). A socket file left by a dead
 * service is replaced; one that answers means another service is running, which is an error (two services would
 * each think they own the in-flight work).
 *
 * Windows: a named pipe (\\.\pipe\hcn-cni) served by the addon (listenPipe, native/addon/pipe_server_win.cc), not
 * by Node's net.Server: Node creates its pipes with Windows' default security descriptor, which grants read access
 * to Everyone and Anonymous (https://learn.microsoft.com/en-us/windows/win32/ipc/named-pipe-security-and-access-rights),
 * and never says who connected. The native server
 *  - gives every instance a protected DACL granting GENERIC_ALL to SYSTEM and BUILTIN\Administrators only (SDDL
 *    D:P(A;;GA;;;SY)(A;;GA;;;BA)), so no one else may open the pipe or create an instance of it;
 *  - refuses to start if a pipe of that name exists (WaitNamedPipeW, then FILE_FLAG_FIRST_PIPE_INSTANCE), so neither
 *    a second service nor a squatter that created the name first can take the clients;
 *  - sets PIPE_REJECT_REMOTE_CLIENTS;
 *  - checks each client's token (ImpersonateNamedPipeClient → OpenThreadToken → CheckTokenMembership →
 *    RevertToSelf) against the allowed SIDs before anything is read, and disconnects a client that holds none;
 *  - hands an accepted pipe to Node as a socket (uv_open_osfhandle → net.Socket({ fd })), so the protocol code is
 *    the same on both systems.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import type { NativeHcn, NativePipeServer } from '../hns/native-types';

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

/** The addon's OS file lock (fcntl OFD lock), which the kernel releases when its holder dies. */
export interface FileLocks {
  tryLockFile(path: string): number | null;
  unlockFile(handle: number): void;
}

/**
 * Linux: `server` on the unix socket `address` with `mode`, refusing if another service answers there or holds
 * `<address>.lock`. The lock is what keeps a second service out when the first one's socket file was deleted under
 * it (a tmpfiles cleaner, `rm -rf /run/hcn-cni`): nothing answers at the path then, but two services would each
 * think they own the in-flight work. Returns the release of the lock (after the server has closed).
 */
export async function listenExclusive(
  server: net.Server,
  address: string,
  mode: number,
  locks?: FileLocks,
): Promise<() => void> {
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  if (isPipe(address)) throw new Error(`listenExclusive is for unix sockets; ${address} is a pipe (listenPipe)`);
  fs.mkdirSync(path.dirname(address), { recursive: true, mode: 0o700 });
  const lock = locks?.tryLockFile(`${address}.lock`);
  if (lock === null)
    throw new Error(`another hcn-cni service holds ${address}.lock (its socket may have been deleted)`);
  const release = () => {
    if (lock !== undefined) locks!.unlockFile(lock);
  };
  try {
    await removeStaleSocket(address);
    // The socket must never exist with a wider mode than asked, not even between bind() and chmod().
    const old = process.umask(0o777 & ~mode);
    try {
      await listen();
    } finally {
      process.umask(old);
    }
    fs.chmodSync(address, mode);
  } catch (e) {
    release();
    throw e;
  }
  return release;
}

/**
 * What may be at the address before the service binds it: nothing, or the socket of a service that has died. Anything
 * else is the operator's (a file named by a typo or a wrong variable, a symlink, a directory): the service refuses to
 * start rather than delete it, and a socket that answers is a running service.
 */
async function removeStaleSocket(address: string): Promise<void> {
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
  fs.unlinkSync(address);
}

/** SYSTEM and BUILTIN\Administrators: who may talk to the service on Windows (the pipe's DACL grants only them). */
export const SERVICE_SIDS: readonly string[] = ['S-1-5-18', 'S-1-5-32-544'];

export interface PipeListenOptions {
  address: string;
  native: Pick<NativeHcn, 'listenPipe'>;
  /** Whose tokens may connect (any one of them, enabled, in the client's token). */
  allowSids: readonly string[];
  onConnection(socket: net.Socket): void;
  onRefused(who: { reason: string; pid: number | null; user: string | null }): void;
  onError(message: string): void;
}

/** Windows: the native pipe server (see the header); accepted clients arrive as net.Sockets. */
export function listenPipe(options: PipeListenOptions): NativePipeServer {
  return options.native.listenPipe(options.address, options.allowSids, (event) => {
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
    } else if (event.type === 'refused') options.onRefused({ reason: event.reason, pid: event.pid, user: event.user });
    else options.onError(event.message);
  });
}
