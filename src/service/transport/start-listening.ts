/**
 * Where the service accepts connections: a Windows named pipe (the addon's pipe server, which checks the client's
 * token against allowSids before it hands a connection over) or a unix socket (0600, the peer's uid checked by the
 * intake before a byte is read). Returns how to stop listening, and what a hand-over to a new service needs.
 */
import * as net from 'net';
import type { NativeHcn } from '../../hns/native-types';
import type { Logger } from '../../log/logger';
import type { HandOverPort } from '../hand-over/hand-over';
import { isPipe, listenExclusive, listenPipeTakingOver, SERVICE_SIDS } from './listeners';
import { PROTOCOL_VERSION } from './protocol';

export async function startListening(o: {
  address: string;
  native: NativeHcn;
  log: Logger;
  allowSids: readonly string[] | undefined;
  socketMode: number | undefined;
  onConnection: (socket: net.Socket) => void;
  onRefused: () => void;
  /** Ask a service of ours serving the address to hand it over, rather than refuse to start. */
  takeOver: boolean;
  pid: number;
}): Promise<Listening> {
  const { address, log } = o;
  if (isPipe(address)) {
    const allowSids = o.allowSids ?? SERVICE_SIDS;
    const { pipe, port } = await listenPipeTakingOver(
      {
        address,
        native: o.native,
        allowSids,
        onConnection: o.onConnection,
        onRefused: (who) => {
          o.onRefused();
          log.warn({ address, ...who }, 'service: refused a connection (nothing was read)');
        },
        onError: (message) => log.error({ address, err: message }, 'service: pipe server'),
      },
      o.takeOver ? { pid: o.pid } : undefined,
    );
    log.info({ address, protocol: PROTOCOL_VERSION, dacl: pipe.dacl, allowSids }, 'service: listening');
    return {
      close: async (handedOver = false) => {
        pipe.close(handedOver);
        // After a hand-over, the connections close(true) handed over arrive through the addon's thread-safe function
        // on the loop's next turns: let them reach the intake before the drain counts what it has to finish.
        if (handedOver) for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
      },
      handOver: port,
    };
  }
  const server = net.createServer({ pauseOnConnect: true }, o.onConnection);
  const socket = await listenExclusive(
    server,
    address,
    o.socketMode ?? 0o600,
    o.native,
    o.takeOver ? { pid: o.pid } : undefined,
  );
  log.info({ address, protocol: PROTOCOL_VERSION }, 'service: listening');
  return { close: (handedOver = false) => socket.close(handedOver), handOver: socket };
}

export interface Listening {
  /** Stops accepting; `handedOver`: a new service's socket is at the address now (listeners.ts UnixListening). */
  close(handedOver?: boolean): Promise<void>;
  /** What a hand-over to a new service needs (listeners.ts: the unix socket's lock and address, or the pipe's). */
  handOver?: HandOverPort;
}
