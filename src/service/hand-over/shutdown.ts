/**
 * How the service ends: closed by its caller, retired by itself at the abandoned-call bound (abandoned-bound.ts), or
 * handed over to a new service (hand-over.ts). Each way it stops accepting, stops its background work, and ends once
 * every accepted request has finished; the metrics close last (first on a hand-over: the new service needs their port).
 */
import type { Logger } from '../../log/logger';
import { abandonedStatus, watchBound } from './abandoned-bound';

export interface Ending {
  /** Settles, with the reason, once the service retired by itself. */
  readonly retired: Promise<string>;
  /** Settles, with what happened, once the service handed over and every accepted request has finished. */
  readonly handedOver: Promise<string>;
  /** A new service has taken the address: stop accepting (leaving the address to it) and drain. */
  handOver(newPid: string): void;
  /** Retire at once with `reason` (exit EXIT_RETIRED): the service cannot be reached any more. */
  retire(reason: string): void;
  close(): Promise<void>;
}

/** What the service's ending stops and waits for: its parts, in the order they stop. */
export interface EndingParts {
  address: string;
  maxAbandoned: number;
  log: Logger;
  /** The listening socket or pipe, and the requests accepted through it (transport/transport.ts). */
  transport: { stopAccepting(handedOver?: boolean): Promise<void>; drained(): Promise<void> };
  /** The background work: the repair trigger, HNS's notifications and the node agent (agent/agent-wiring.ts). */
  agent: { stopRepairs(): void; stop(): Promise<void> };
  /** The metrics; stop() is idempotent (observability/observability.ts). */
  observability: { stop(): Promise<void> };
}

export function endings(o: EndingParts): Ending {
  const drain = drainer(o);
  const retired = settles<string>();
  const handedOver = settles<string>();
  const retire = (reason: string, message: string, more: object = {}): void => {
    o.log.error({ address: o.address, reason, ...more }, message);
    void drain()
      .then(() => o.observability.stop())
      .then(() => retired.settle(reason));
  };
  const unwatch = watchBound(o.maxAbandoned, (reason) =>
    retire(
      reason,
      'service: too many abandoned HCN calls; no longer accepting (shims run hcn-cni-standalone), exiting once the requests in flight have finished',
      { abandoned: abandonedStatus(o.maxAbandoned).byOp },
    ),
  );
  return {
    retired: retired.promise,
    handedOver: handedOver.promise,
    handOver: (newPid) => {
      unwatch();
      handOverAndDrain(o, drain, newPid, handedOver.settle);
    },
    retire: (reason) => {
      unwatch();
      retire(reason, 'service: no longer reachable; exiting once the requests in flight have finished');
    },
    close: async () => {
      unwatch();
      o.agent.stopRepairs();
      await drain();
      await o.observability.stop();
    },
  };
}

/**
 * Stops accepting (once, however many ways end the service), stops the background work, and resolves once every
 * accepted request has finished.
 */
function drainer(o: EndingParts): (handedOver?: boolean) => Promise<void> {
  let stopped: Promise<void> | undefined;
  return async (handedOver = false) => {
    await (stopped ??= o.transport.stopAccepting(handedOver));
    await o.agent.stop(); // HNS's notifications, then the node agent
    await o.transport.drained();
  };
}

/** A new service took the address: drain, leaving the address to it, and `settle` once every request has finished. */
function handOverAndDrain(
  o: EndingParts,
  drain: (handedOver: boolean) => Promise<void>,
  newPid: string,
  settle: (what: string) => void,
): void {
  o.agent.stopRepairs();
  o.log.info(
    { address: o.address, newPid },
    'service: handed over; no longer accepting, finishing the requests in flight',
  );
  // The metrics' port is let go of now, not after the drain: the new service binds it once it is free
  // (metrics.ts), and a scraper then reads the service that serves.
  const metricsClosed = o.observability.stop();
  void drain(true)
    .then(() => metricsClosed)
    .then(() => settle(`handed over to the service with pid ${newPid}; every accepted request has finished`));
}

/** A promise and what settles it, for the ways the service ends that its caller awaits. */
function settles<T>(): { promise: Promise<T>; settle: (value: T) => void } {
  let settle: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => (settle = resolve));
  return { promise, settle };
}
