/**
 * How the service repairs pods after an HNS restart (src/plugin/verbs/repair.ts), for the configurations served with
 * `repair: true` (ServedConfigs.confs: src/service/served-configs.ts): the unhealthy pods each of the node agent's health checks finds
 * (src/service/agent/node-agent.ts: on its interval, and in its recovery pass right after HNS answers again following a
 * failure, as the service's one HNS-health tracker says: hns-health.ts), and every pod on request (Service.repair).
 * Each pod is repaired in its attachment's turn of the service's queue, so a repair and a verb of the same pod never
 * run at once.
 */
import type { Logger } from '../../log/logger';
import type { NetConf } from '../../cni/types';
import type { PodVerdict } from '../../plugin/pod-health';
import { repairAttachments, type PodRepair } from '../../plugin/verbs/repair';
import type { RepairDeps } from '../../plugin/verbs/repair';
import type { ServedConfigs } from '../served-configs';
import type { KeyedQueue } from '../transport/queue';

export interface RepairTrigger {
  /** Runs a repair now (or waits for the one running) and returns what it did. */
  run(): Promise<PodRepair[]>;
  /** Repairs one configuration's pods the node agent has just judged (its health check). */
  runFor(conf: NetConf, verdicts: readonly PodVerdict[]): Promise<PodRepair[]>;
  stop(): void;
}

export function startRepairTrigger(o: {
  deps: RepairDeps;
  served: ServedConfigs;
  queue: KeyedQueue;
  log: Logger;
  onRepair?: (r: PodRepair) => void;
}): RepairTrigger {
  let running: Promise<PodRepair[]> | undefined;
  const repairConf = async (conf: NetConf, verdicts?: readonly PodVerdict[]): Promise<PodRepair[]> => {
    try {
      const reports = await repairAttachments({
        deps: o.deps,
        conf,
        log: o.log,
        ...(verdicts ? { verdicts } : {}),
        serialize: (a, task) => o.queue.run(`${a.containerId}\0${a.ifname}`, task),
      });
      for (const r of reports) o.onRepair?.(r);
      return reports;
    } catch (e) {
      // HNS still down, or the state directory unreadable: the next trigger tries again.
      o.log.warn({ stateDir: conf.stateDir, err: (e as Error).message }, 'repair: could not run');
      return [];
    }
  };
  const once = async (): Promise<PodRepair[]> => {
    const out: PodRepair[] = [];
    for (const conf of o.served.confs()) if (conf.repair) out.push(...(await repairConf(conf)));
    return out;
  };
  const run = (): Promise<PodRepair[]> => {
    running ??= once().finally(() => (running = undefined));
    return running;
  };
  return {
    run,
    runFor: repairConf,
    stop: () => undefined,
  };
}
