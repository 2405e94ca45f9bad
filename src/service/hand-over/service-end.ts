/**
 * How the service ends, as one part: closed by its caller, retired at the abandoned-call bound, or handed over to a
 * new service (shutdown.ts), and the desk that hears a new service ask for the address (hand-over.ts). Made before
 * the listener, which passes it the hand-over requests it reads (refused until the part starts); started last, given
 * the listener and the parts its ending stops.
 */
import type * as net from 'net';
import type { NativeHcn } from '../../hns/native-types';
import type { Logger } from '../../log/logger';
import type { HostHns } from '../../plugin/host-hns';
import { DEFAULT_MAX_ABANDONED_CALLS } from './abandoned-bound';
import { HandOverDesk, type HandOverPort } from './hand-over';
import { endings, type Ending, type EndingParts } from './shutdown';

export interface HandOverOptions {
  address: string;
  /**
   * When another hcn-cni service serves the address, ask it to hand over (hand-over.ts) rather than refuse to
   * start. Default true (`hcn-cni serve --no-take-over`: false).
   */
  takeOver?: boolean;
  /** How long a hand-over offered stands before the service takes its lock back (hand-over.ts OFFER_DEADLINE_MS). */
  handOverDeadlineMs?: number;
  /** Abandoned HCN calls at which the service retires (abandoned-bound.ts); default DEFAULT_MAX_ABANDONED_CALLS. */
  maxAbandonedCalls?: number;
}

/** What the ending is given when it starts: the listener's side of a hand-over, and the parts it stops. */
export interface EndUses extends Pick<EndingParts, 'transport' | 'agent' | 'observability'> {
  /** What a hand-over needs of the listener (listeners.ts); undefined: none possible. */
  port: HandOverPort | undefined;
  /** The HCN handles the service keeps (src/hns/held-handles.ts): at "taken", the new service opens its own. */
  held: { native: NativeHcn; deps: { readonly hns: Pick<HostHns, 'heldHandles'> } };
}

export class ServiceEnd {
  readonly takeOver: boolean;
  readonly maxAbandoned: number;
  private desk: HandOverDesk | undefined;

  constructor(
    private readonly options: HandOverOptions,
    private readonly log: Logger,
  ) {
    this.takeOver = options.takeOver ?? true;
    this.maxAbandoned = options.maxAbandonedCalls ?? DEFAULT_MAX_ABANDONED_CALLS;
  }

  /** The address of the service this one takes over when it starts, if it may (the metrics wait for its port). */
  get takeOverFrom(): string | undefined {
    return this.takeOver ? this.options.address : undefined;
  }

  /** A new service asks for the address (the intake checked its peer): to the desk; refused before start(). */
  readonly request = (socket: net.Socket, env: Record<string, string>): void =>
    this.desk ? this.desk.request(socket, env) : void socket.destroy();

  /** Watches the abandoned-call bound and opens the desk; returns how the service ends. */
  start(uses: EndUses): Ending {
    const { address, handOverDeadlineMs } = this.options;
    const { log, maxAbandoned } = this;
    const { held, ...parts } = uses;
    const ending = endings({ address, maxAbandoned, log, ...parts });
    this.desk = new HandOverDesk({
      address,
      port: uses.port,
      log,
      ...(handOverDeadlineMs !== undefined ? { offerDeadlineMs: handOverDeadlineMs } : {}),
      // The new service opens its own HCN handles: this one closes what it kept.
      onTaken: (newPid) => (held.deps.hns.heldHandles?.dropAll(held.native), ending.handOver(newPid)),
      onLost: ending.retire,
    });
    return ending;
  }
}
