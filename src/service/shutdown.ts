/**
 * How the service ends: closed by its caller, or retired by itself at the abandoned-call bound (abandoned-bound.ts).
 * Either way it stops accepting, stops its background work, and ends once every accepted request has finished;
 * the metrics close last.
 */
import type { Logger } from '../log/logger';
import { abandonedStatus, watchBound } from './abandoned-bound';
import type { NodeAgent } from './node-agent';
import type { RepairTrigger } from './repair-trigger';
import type { RequestBook } from './requests';

export interface Ending {
  /** Settles, with the reason, once the service retired by itself. */
  readonly retired: Promise<string>;
  close(): Promise<void>;
}

export function endings(o: {
  address: string;
  maxAbandoned: number;
  log: Logger;
  stopListening: () => Promise<void>;
  hnsWatch: { close(): Promise<void> } | undefined;
  agent: NodeAgent;
  repair: RepairTrigger;
  book: RequestBook;
  closeMetrics: () => Promise<void>;
}): Ending {
  let stopped: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    await (stopped ??= o.stopListening());
    await o.hnsWatch?.close();
    await o.agent.stop();
    await o.book.drained();
  };
  let retire: (reason: string) => void = () => undefined;
  const retired = new Promise<string>((resolve) => (retire = resolve));
  const unwatch = watchBound(o.maxAbandoned, (reason) => {
    o.log.error(
      { address: o.address, reason, abandoned: abandonedStatus(o.maxAbandoned).byOp },
      'service: too many abandoned HCN calls; no longer accepting (shims run hcn-cni-standalone), exiting once the requests in flight have finished',
    );
    void drain()
      .then(o.closeMetrics)
      .then(() => retire(reason));
  });
  return {
    retired,
    close: async () => {
      unwatch();
      o.repair.stop();
      await drain();
      await o.closeMetrics();
    },
  };
}
