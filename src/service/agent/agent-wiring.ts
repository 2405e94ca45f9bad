/**
 * The service's background work, as one part: the node agent (node-agent.ts) with the configurations of the
 * runtime's configuration directory served from the start, the repair trigger for the pods its health checks find
 * unhealthy (repair-trigger.ts), the service's one HNS-health tracker (hns-health.ts), HNS's own word that it
 * restarted where the host offers it, and the bridge network asked for at the start (`--create-network`). Made
 * before the socket (the status and the metrics read the agent); started once the service listens.
 */
import { defaultStateDir } from '../../cni/defaults';
import type { NetConf } from '../../cni/types';
import { Hcn } from '../../hns/hcn';
import type { NativeHcn } from '../../hns/native-types';
import { watchHnsService, type HnsServiceEvent } from '../../hns/service-notifications';
import type { Logger } from '../../log/logger';
import type { NetworkAtStartDeps } from '../../plugin/network-at-start';
import type { RepairDeps } from '../../plugin/verbs/repair';
import type { ServedConfigs } from '../served-configs';
import type { HnsHealth } from '../observability/hns-health';
import type { MetricsSink } from '../observability/tally';
import type { KeyedQueue } from '../transport/queue';
import { watchConfDir } from './conf-dir';
import { createNetworkAtStart } from './network-at-start-log';
import { NodeAgent, type AgentDeps } from './node-agent';
import { NodeDoctor } from './node-doctor';
import { startRepairTrigger, type RepairTrigger } from './repair-trigger';

export interface AgentOptions {
  platform: NodeJS.Platform;
  /**
   * The runtime's CNI configuration directory: hcn-cni's networks in it are served (audited, health-checked,
   * repaired, kept IPs released) from the start, before any verb of theirs arrives (conf-dir.ts).
   */
  confDir?: string;
  /** CNI_PATH for the delegated IPAM of those configurations (the runtime's CNI bin directories). */
  binDirs?: readonly string[];
  /** Where the audit's state lives by default (same as the standalone executable's). */
  defaults?: { stateDir?: string };
  /**
   * The node agent's timing (node-agent.ts): its HNS probe (--hns-probe-seconds), its tick (tests), and whether HNS's
   * service notifications wake it (default true where the host has them; false: tests of the probe and the interval).
   */
  agent?: { probeMs?: number; tickMs?: number; hnsNotifications?: boolean };
  /**
   * A configuration whose bridge network (createNetwork) is made once the service accepts, before any pod asks
   * (src/plugin/network-at-start.ts). Opt-in: `hcn-cni serve --create-network`.
   */
  createNetwork?: NetConf;
}

/** What the background work uses of the parts made before it. */
export interface AgentUses {
  native: NativeHcn;
  log: Logger;
  /** The node agent's, the repair's and the network at start's dependencies (src/plugin/deps.ts makes them). */
  deps: AgentDeps & RepairDeps & NetworkAtStartDeps;
  served: ServedConfigs;
  /** A repair runs its pod in the attachment's turn, so a repair and a verb of one pod never run at once. */
  queue: KeyedQueue;
  observability: { events: Pick<MetricsSink, 'repair'>; health: HnsHealth };
}

export class Agent {
  readonly repair: RepairTrigger;
  readonly node: NodeAgent;
  private hnsWatch: { close(): Promise<void> } | undefined;

  constructor(
    private readonly options: AgentOptions,
    private readonly uses: AgentUses,
  ) {
    const { deps, served, queue, log, observability } = uses;
    const { events, health } = observability;
    this.repair = startRepairTrigger({ deps, served, queue, log, onRepair: (r) => events.repair(r.outcome) });
    this.node = createNodeAgent(options, uses, this.repair, health);
  }

  /** The agent's passes, HNS's notifications, and the network asked for at the start (in the background). */
  start(): void {
    const { deps, log } = this.uses;
    this.node.start();
    this.hnsWatch = watchHnsForAgent(this.options, this.uses, this.node);
    if (this.options.createNetwork) createNetworkAtStart(this.options.createNetwork, deps, log);
  }

  /** No repair triggered from now on. */
  readonly stopRepairs = (): void => this.repair.stop();

  /** Stops watching HNS, then the agent (its pass in progress finishes). */
  readonly stop = async (): Promise<void> => {
    await this.hnsWatch?.close();
    await this.node.stop();
  };
}

function createNodeAgent(
  options: AgentOptions,
  on: Pick<AgentUses, 'deps' | 'served' | 'log'>,
  repair: RepairTrigger,
  health: HnsHealth,
): NodeAgent {
  const { log } = on;
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
function watchHnsForAgent(
  options: AgentOptions,
  uses: Pick<AgentUses, 'native' | 'log' | 'deps'>,
  agent: NodeAgent,
): { close(): Promise<void> } | undefined {
  if (options.agent?.hnsNotifications === false) return undefined;
  const { native, log } = uses;
  const held = uses.deps.hns.heldHandles;
  const listener = (event: HnsServiceEvent): void => {
    if (event === 'disconnected') held?.dropAll(native);
    agent.hnsNotified(event);
  };
  return watchHnsService(new Hcn(native, native.capabilities()), listener, {
    onError: (e) => log.warn({ err: (e as Error).message }, 'service: HNS service notifications not registered'),
  });
}
