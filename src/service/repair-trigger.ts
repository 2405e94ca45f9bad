/**
 * When the service repairs pods after an HNS restart (src/plugin/repair.ts), for the configurations served with
 * `repair: true` (PluginRuntime.servedConfs): right after HNS answers again following calls it did not answer (an
 * RPC failure or a timeout: the restart), and for the unhealthy pods each of the node agent's health checks finds
 * (src/service/node-agent.ts: its interval, its HNS probe), since a restart between two requests shows in no call of
 * theirs.
 * One run at a time; each pod is repaired in its attachment's turn of the service's queue, so a repair and a verb of
 * the same pod never run at once.
 */
import type { HcnCallObservation } from '../hns/hcn';
import { isUnreachableHresult } from '../hns/hcn-error';
import type { Logger } from '../log/logger';
import type { NetConf } from '../cni/types';
import type { PodVerdict } from '../plugin/pod-health';
import { repairAttachments, type PodRepair } from '../plugin/repair';
import type { PluginRuntime } from '../plugin/runtime';
import type { KeyedQueue } from './queue';

export interface RepairTrigger {
  /** Told of every HCN call (the runtime's observer). */
  hcnCall(call: HcnCallObservation): void;
  /** Runs a repair now (or waits for the one running) and returns what it did. */
  run(): Promise<PodRepair[]>;
  /** Repairs one configuration's pods the node agent has just judged (its health check). */
  runFor(conf: NetConf, verdicts: readonly PodVerdict[]): Promise<PodRepair[]>;
  stop(): void;
}

export function startRepairTrigger(o: {
  runtime: PluginRuntime;
  queue: KeyedQueue;
  log: Logger;
  onRepair?: (r: PodRepair) => void;
}): RepairTrigger {
  let unanswered = false;
  let running: Promise<PodRepair[]> | undefined;
  const repairConf = async (conf: NetConf, verdicts?: readonly PodVerdict[]): Promise<PodRepair[]> => {
    try {
      const reports = await repairAttachments({
        rt: o.runtime,
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
    for (const conf of o.runtime.servedConfs()) if (conf.repair) out.push(...(await repairConf(conf)));
    return out;
  };
  const run = (): Promise<PodRepair[]> => {
    running ??= once().finally(() => (running = undefined));
    return running;
  };
  return {
    hcnCall(call) {
      if (call.hresult !== undefined && isUnreachableHresult(call.hresult)) unanswered = true;
      else if (call.hresult === undefined && unanswered) {
        unanswered = false;
        setImmediate(() => void run());
      }
    },
    run,
    runFor: repairConf,
    stop: () => undefined,
  };
}
