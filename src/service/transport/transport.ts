/**
 * How requests reach the service, as one part: the per-attachment queue (queue.ts), the book of requests
 * (request-book.ts), the intake that reads, checks and runs each one (intake.ts), and the listening socket or pipe
 * (start-listening.ts), bound when the part starts — last of what serves a request, so that once a connection can
 * arrive everything that serves it exists.
 */
import type * as net from 'net';
import type { NativeHcn } from '../../hns/native-types';
import type { Logger } from '../../log/logger';
import type { PluginDeps } from '../../plugin/deps';
import type { HandOverPort } from '../hand-over/hand-over';
import type { Observability } from '../observability/observability';
import type { ServedConfigs } from '../served-configs';
import { RequestIntake } from './intake';
import { KeyedQueue } from './queue';
import { RequestBook } from './request-book';
import { startListening, type Listening } from './start-listening';

export interface TransportOptions {
  /** Unix socket path, or a Windows pipe name (\\.\pipe\…). */
  address: string;
  platform: NodeJS.Platform;
  /** This process (intents record it; a hand-over's proof names it). */
  pid: number;
  /** The only uid allowed to connect (Linux): the service's own. Undefined: no uid check (Windows). */
  allowUid?: number;
  /**
   * Windows: the SIDs a client's token must hold one of (enabled) to be served; default SERVICE_SIDS (SYSTEM,
   * BUILTIN\Administrators). Not reachable from the CLI or the environment: only tests change it, to show the
   * token check refuses a client the pipe's DACL lets in (wine has a single user, an administrator).
   */
  allowSids?: readonly string[];
  /** Socket file mode (Linux). Only tests change it, to show the peer check refuses what the mode would let in. */
  socketMode?: number;
  /**
   * How long a connection may take to send its whole request (the shim sends it in one go); one that has not
   * finished by then is closed unanswered (its shim, if it is one, runs the standalone executable). Default 10 s.
   */
  requestTimeoutMs?: number;
  /**
   * Connections whose request is not complete yet, at most; one more is closed at once (its shim falls back). Bounds
   * what clients that send slowly, or never, can hold: descriptors, and request bytes (≤ 2 MiB each). Default 64.
   */
  maxPendingConnections?: number;
  /** The standalone executable's defaults, which every verb run here uses too (state directory, log file). */
  defaults?: { stateDir?: string; logFile?: string };
}

/** What the transport uses of the parts made before it. */
export interface TransportUses {
  native: NativeHcn;
  log: Logger;
  /** The plugin's dependencies, made once for every request (src/plugin/deps.ts). */
  deps: PluginDeps;
  served: ServedConfigs;
  observability: Pick<Observability, 'events' | 'logs' | 'status'>;
  /** The hand-over desk's door (hand-over/service-end.ts): a new service asking to take the address over. */
  handOver: { takeOver: boolean; request(socket: net.Socket, env: Record<string, string>): void };
}

export class Transport {
  /** Requests of one attachment one after another, in arrival order; the repair trigger takes its turns too. */
  readonly queue = new KeyedQueue();
  readonly book = new RequestBook();
  private listening: Listening | undefined;

  constructor(
    private readonly options: TransportOptions,
    private readonly uses: TransportUses,
  ) {}

  /** Binds the socket or pipe (throws, refusing the start, when the address is taken or not ours to replace). */
  async start(): Promise<void> {
    const { native, log, deps, served, observability, handOver } = this.uses;
    const intake = new RequestIntake({
      ...this.options,
      requestTimeoutMs: this.options.requestTimeoutMs ?? 10_000,
      maxPending: this.options.maxPendingConnections ?? 64,
      ...{ native, log, deps, served, queue: this.queue, book: this.book },
      ...{ logs: observability.logs, counts: observability.events, status: observability.status },
      onHandOver: handOver.request,
    });
    const { address, allowSids, socketMode, pid } = this.options;
    this.listening = await startListening({
      ...{ address, native, log, allowSids, socketMode, takeOver: handOver.takeOver, pid },
      onConnection: intake.onConnection,
      onRefused: () => this.book.counts.refused++,
    });
  }

  /** What a hand-over to a new service needs of the listener (listeners.ts); undefined before start(). */
  get handOverPort(): HandOverPort | undefined {
    return this.listening?.handOver;
  }

  /** Stops accepting; `handedOver`: a new service's socket is at the address now (listeners.ts UnixListening). */
  readonly stopAccepting = async (handedOver = false): Promise<void> => this.listening?.close(handedOver);

  /** Resolves once every accepted request has finished. */
  readonly drained = (): Promise<void> => this.book.drained();
}
