/**
 * Simulator addresses, as HCN_SIM spells them: `unix:/abs/path.sock` or `tcp:127.0.0.1:PORT` (also
 * `tcp:localhost:PORT`). Nothing else: the simulator and its clients only ever talk on this machine.
 */
import * as path from 'node:path';

export type SimAddress = { kind: 'unix'; path: string } | { kind: 'tcp'; host: '127.0.0.1'; port: number };

export function parseAddress(text: string): SimAddress {
  if (typeof text !== 'string') throw new Error('address must be a string');
  if (text.startsWith('unix:')) {
    const p = text.slice('unix:'.length);
    if (p === '') throw new Error(`bad address ${text}: unix: needs a socket path`);
    return { kind: 'unix', path: path.resolve(p) };
  }
  const m = /^tcp:(127\.0\.0\.1|localhost):(\d{1,5})$/.exec(text);
  if (m && Number(m[2]) <= 65535) return { kind: 'tcp', host: '127.0.0.1', port: Number(m[2]) };
  throw new Error(`bad address ${JSON.stringify(text)}: expected unix:/path.sock or tcp:127.0.0.1:PORT`);
}

export function formatAddress(a: SimAddress): string {
  return a.kind === 'unix' ? `unix:${a.path}` : `tcp:${a.host}:${a.port}`;
}

/** net.connect / server.listen options for an address. */
export function netOptions(a: SimAddress): { path: string } | { host: string; port: number } {
  return a.kind === 'unix' ? { path: a.path } : { host: a.host, port: a.port };
}
