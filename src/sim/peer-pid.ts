/**
 * Which Linux process is at the other end of a TCP connection to us. The kill-client fault SIGKILLs the caller, and
 * the client library sends its Unix pid — but under wine it cannot know it: every file a wine process opens is opened
 * by the wineserver on its behalf, so the Z:\proc\self\stat it reads describes the wineserver. The connection itself
 * does not lie: /proc/net/tcp maps the client's port to a socket inode, and /proc/<pid>/fd shows who holds it.
 * Linux only; undefined when the answer is not unique (the caller then uses the pid the client sent).
 */
import * as fs from 'fs';

function socketInode(clientPort: number): string | undefined {
  const port = clientPort.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // f[1] local "ADDR:PORT" (the client's end), f[9] the inode.
      if (f.length > 9 && f[1]!.endsWith(`:${port}`) && f[9] !== '0') return f[9];
    }
  }
  return undefined;
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export function tcpPeerPid(clientPort: number): number | undefined {
  const inode = socketInode(clientPort);
  if (!inode) return undefined;
  const target = `socket:[${inode}]`;
  const holders = new Set<number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === target) holders.add(pid);
      } catch {
        // gone, or not ours to read
      }
    }
  }
  // The wineserver holds a wine process's sockets too; the process we want is the other holder.
  const callers = [...holders].filter((pid) => !comm(pid).startsWith('wineserver'));
  return callers.length === 1 ? callers[0] : undefined;
}
