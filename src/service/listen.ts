/**
 * Where the service listens, and who can reach it.
 *
 * Linux: a unix socket, created with mode 0600 (umask while binding, chmod after) in a directory this function
 * creates 0700; the service also checks each peer's uid before reading (service.ts). A socket file left by a dead
 * service is replaced; one that answers means another service is running, which is an error (two services would
 * each think they own the in-flight work).
 *
 * Windows: a named pipe (\\.\pipe\hcn-cni). Node cannot set a pipe's DACL, so the pipe has Windows' default one:
 * full control for LocalSystem, Administrators and the creator (the service runs as SYSTEM in the HostProcess
 * container), read-only for Everyone — a non-administrator can open it for reading but cannot write a request, so
 * nothing from it is ever read as one. An explicit admin/SYSTEM-only DACL and a token check of the client are not
 * done (README "Not done").
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';

function isPipe(address: string): boolean {
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

export async function listenExclusive(
  server: net.Server,
  address: string,
  platform: NodeJS.Platform,
  mode: number,
): Promise<void> {
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  if (platform === 'win32' || isPipe(address)) {
    await listen();
    return;
  }
  fs.mkdirSync(path.dirname(address), { recursive: true, mode: 0o700 });
  if (fs.existsSync(address)) {
    if (await answers(address)) throw new Error(`another hcn-cni service is already listening on ${address}`);
    fs.unlinkSync(address);
  }
  // The socket must never exist with a wider mode than asked, not even between bind() and chmod().
  const old = process.umask(0o777 & ~mode);
  try {
    await listen();
  } finally {
    process.umask(old);
  }
  fs.chmodSync(address, mode);
}
