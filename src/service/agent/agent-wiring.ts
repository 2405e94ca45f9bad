/**
 * The node agent as the service runs it (node-agent.ts): the configurations of the runtime's configuration
 * directory served from the start, the repair trigger for the pods its health checks find unhealthy, the service's
 * one HNS-health tracker (hns-health.ts), and HNS's own word that it restarted, where the host offers it.
 */
import { defaultStateDir } from '../../cni/defaults';
import { Hcn } from '../../hns/hcn';
import type { NativeHcn } from '../../hns/native-types';
import type { HeldHandles } from '../../hns/held-handles';
import { watchHnsService, type HnsServiceEvent } from '../../hns/service-notifications';
import type { Logger } from '../../log/logger';
import type { ServedConfigs } from '../served-configs';
import { watchConfDir } from './conf-dir';
import type { HnsHealth } from '../observability/hns-health';
import { NodeAgent, type AgentDeps } from './node-agent';
import { NodeDoctor } from './node-doctor';
import type { RepairTrigger } from './repair-trigger';

export interface AgentWiringOptions {
  platform: NodeJS.Platform;
  confDir?: string;
  binDirs?: readonly string[];
  defaults?: { stateDir?: string };
  agent?: { probeMs?: number; tickMs?: number; hnsNotifications?: boolean };
}

export function createNodeAgent(
  options: AgentWiringOptions,
  on: { deps: AgentDeps; served: ServedConfigs },
  repair: RepairTrigger,
  log: Logger,
  health: HnsHealth,
): NodeAgent {
  return new NodeAgent({
    deps: on.deps,
    served: on.served,
    log,
    ...(options.confDir
      ? {
          discover: watchConfDir({
            dir: options.confDir,
            binDirs: options.binDirs ?? [],
            platform: options.platform,
            defaults: { stateDir: options.defaults?.stateDir ?? defaultStateDir(options.platform) },
            log,
          }),
        }
      : {}),
    // The pods its health check finds without the network they need, for a configuration with `repair: true`.
    repair: ({ conf }, verdicts) => repair.runFor(conf, verdicts),
    health,
    doctor: new NodeDoctor({ deps: on.deps, platform: options.platform }),
    ...(options.agent?.probeMs !== undefined ? { probeMs: options.agent.probeMs } : {}),
    ...(options.agent?.tickMs !== undefined ? { tickMs: options.agent.tickMs } : {}),
  });
}

/**
 * HNS's own word that it restarted, where the host offers it: the agent's recovery pass (audit, release, repair)
 * right after HNS is back, not at its next probe, which stays the fallback; and every kept HCN handle dropped at the
 * disconnect (a restarted HNS knows none of them: src/hns/held-handles.ts). Returns how to stop watching.
 */
export function watchHnsForAgent(
  options: AgentWiringOptions,
  native: NativeHcn,
  agent: NodeAgent,
  log: Logger,
  held?: HeldHandles,
): { close(): Promise<void> } | undefined {
  if (options.agent?.hnsNotifications === false) return undefined;
  const listener = (event: HnsServiceEvent): void => {
    if (event === 'disconnected') held?.dropAll(native);
    agent.hnsNotified(event);
  };
  return watchHnsService(new Hcn(native, native.capabilities()), listener, {
    onError: (e) => log.warn({ err: (e as Error).message }, 'service: HNS service notifications not registered'),
  });
}
