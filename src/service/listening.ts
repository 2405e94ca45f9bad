/**
 * Where the service accepts connections: a Windows named pipe (the addon's pipe server, which checks the client's
 * token against allowSids before it hands a connection over) or a unix socket (0600, the peer's uid checked by the
 * intake before a byte is read). Returns how to stop listening.
 */
import * as net from 'net';
import type { NativeHcn } from '../hns/native-types';
import type { Logger } from '../log/logger';
import { isPipe, listenExclusive, listenPipe, SERVICE_SIDS } from './listen';
import { PROTOCOL_VERSION } from './protocol';

export async function startListening(o: {
  address: string;
  native: NativeHcn;
  log: Logger;
  allowSids: readonly string[] | undefined;
  socketMode: number | undefined;
  onConnection: (socket: net.Socket) => void;
  onRefused: () => void;
}): Promise<() => Promise<void>> {
  const { address, log } = o;
  if (isPipe(address)) {
    const allowSids = o.allowSids ?? SERVICE_SIDS;
    const pipe = listenPipe({
      address,
      native: o.native,
      allowSids,
      onConnection: o.onConnection,
      onRefused: (who) => {
        o.onRefused();
        log.warn({ address, ...who }, 'service: refused a connection (nothing was read)');
      },
      onError: (message) => log.error({ address, err: message }, 'service: pipe server'),
    });
    log.info({ address, protocol: PROTOCOL_VERSION, dacl: pipe.dacl, allowSids }, 'service: listening');
    return () => Promise.resolve(pipe.close());
  }
  const server = net.createServer({ pauseOnConnect: true }, o.onConnection);
  const unlock = await listenExclusive(server, address, o.socketMode ?? 0o600, o.native);
  log.info({ address, protocol: PROTOCOL_VERSION }, 'service: listening');
  return () =>
    new Promise<void>((resolve) =>
      server.close(() => {
        unlock();
        resolve();
      }),
    );
}
