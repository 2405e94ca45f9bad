/**
 * The resident service's background work for the node: the whole node's leak audit, so that no ADD has to list
 * every network and endpoint (src/plugin/audit-due.ts), and a node without pod churn still loses its leaks.
 *
 * - Per state directory the service has served (ServedConfigs.contexts, src/service/served-configs.ts: the latest configuration and IPAM
 *   client of each network in it), an audit once the last one — by this agent, or by any process, GC or `hcn-cni audit`
 *   (StateStore.lastAudited) — is auditIntervalSeconds old (the one rule: src/plugin/audit-due.ts). A directory
 *   served with `"audit": false` is not audited (the operator turned it off); with `"repair": true` beside it, it
 *   still gets `repair` on the same interval (kept here, per directory, since no audit stamps it), else it is left
 *   alone.
 * - Whether HNS answers is the service's one tracker (hns-health.ts), told by every HCN call the service makes, by
 *   HNS's service notifications and by a cheap probe of the agent's own (one HcnEnumerateNetworks, ids only, every
 *   probeMs while HNS answers, every tick while it fails). Once HNS answers again, every directory is audited (a
 *   repair-only one repaired) at once.
 * - Its own intervals (the probe's, a repair-only directory's) are measured on a monotonic clock: a wall clock stepped
 *   back no longer pauses them. The audit stamp is another process's wall clock too, so that one is compared on the
 *   wall clock, by the due rule's step-back clause.
 * - After an audit, the IPs DELs had to keep (their endpoints now gone) are released through each network's own IPAM
 *   (pending-ipam.ts). Then every network of the directory has its pods' health checked (pod-health.ts: endpoint
 *   there, attached as recorded, not failed in HNS), kept for `hcn-cni service`, the metrics and STATUS, and handed to
 *   `repair` for the networks configured with `repair: true` — each pod whose repair keeps failing after a back-off
 *   (repair-backoff.ts). Records of a network no configuration of this service names are reported (unserved), never
 *   guessed at.
 * - One pass at a time; audits run beside the verbs, as separate processes would (the intents make that safe).
 */
import type { IpamClient, NetConf } from '../../cni/types';
import { hcnCause, isUnreachable } from '../../hns/hcn-error';
import type { Logger } from '../../log/logger';
import { auditDue } from '../../plugin/audit-due';
import { releasePendingIpam } from '../../plugin/pending-ipam';
import { countByHealth, judgePods, type PodProblem, type PodVerdict } from '../../plugin/pod-health';
import { ofNetwork, type PodRepair } from '../../plugin/verbs/repair';
import type { Auditor } from '../../plugin/auditor';
import type { HostHns } from '../../plugin/host-hns';
import type { StateStores } from '../../plugin/state-stores';
import { ownerKey } from '../../state/records';
import { HnsHealth } from '../observability/hns-health';
import type { ServedConfigs } from '../served-configs';
import type { NodeDoctor } from './node-doctor';
import { RepairBackoff, type Backoff } from './repair-backoff';

type AuditReport = Awaited<ReturnType<Auditor['audit']>>;

/** What the agent uses of the plugin's dependencies: HNS, the state stores, the auditor. */
export interface AgentDeps {
  readonly hns: HostHns;
  readonly stores: StateStores;
  readonly auditor: Auditor;
}
type Served = { conf: NetConf; ipam: IpamClient };

export interface NodeAgentOptions {
  deps: AgentDeps;
  /** The configurations the service serves (src/service/served-configs.ts): what the agent works for. */
  served: ServedConfigs;
  log: Logger;
  /**
   * How often HNS is probed while it answers (default 5 s; 0: never, only the verbs' calls tell), and how often the
   * due audits are looked for (1 s).
   */
  probeMs?: number;
  tickMs?: number;
  /** Configurations known without a verb (the runtime's configuration directory), served too; asked every tick. */
  discover?: () => ReadonlyArray<Served>;
  /** Repairs one network's unhealthy pods (the service's repair), for a configuration with `repair: true`. */
  repair?: (served: Served, verdicts: readonly PodVerdict[]) => Promise<readonly PodRepair[]>;
  /** The doctor's checks at each visit, before its audit (node-doctor.ts), for hcn_cni_node_findings. */
  doctor?: NodeDoctor;
  /** Whether HNS answers (the service's one tracker, told of its HCN calls); default: the agent's own. */
  health?: HnsHealth;
  /** The wall clock (stamps, the status) and a monotonic one (the agent's own intervals); tests step them. */
  clock?: { now: () => number; monotonic: () => number };
}

/** One network's pods by health, as the last check found them. */
export interface NetworkHealth {
  stateDir: string;
  network: string;
  checkedAt: string;
  counts: Record<'healthy' | PodProblem, number>;
  /** The unhealthy pods (at most MAX_NAMED), by containerId@ifname. */
  unhealthy: Array<{ attachment: string; problem: PodProblem; detail?: string; repairBackoff?: Backoff }>;
}

export interface NodeAgentStatus {
  /** Whole-node audits this agent ran, and when the last one finished (ISO), if any. */
  audits: number;
  lastAuditAt?: string;
  /** Since when HNS has been seen failing (ISO); absent while it answers. */
  hnsFailingSince?: string;
  /** Each served network's pods by health (its last check). */
  health: NetworkHealth[];
  /** Networks with records in a served state directory that no configuration of this service names. */
  unserved: Array<{ stateDir: string; network: string; attachments: number; keptIps: number }>;
  /**
   * Since when each endpoint the doctor saw attached to nothing has been so (ms since epoch, by id in lower case):
   * what `hcn-cni doctor`, one look, cannot know by itself.
   */
  unattachedSince?: Record<string, number>;
}

/** Unhealthy pods named per network in the status (the counts cover all). */
const MAX_NAMED = 20;

export class NodeAgent {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private running = false;
  private woken = false;
  private stopped = false;
  /** When the probe last ran (monotonic). */
  private lastProbe: number | undefined;
  private audits = 0;
  private lastAuditAt: number | undefined;
  /** When each directory whose audit is off was last visited (monotonic; no audit stamp tells). */
  private readonly lastVisited = new Map<string, number>();
  private readonly backoff = new RepairBackoff();
  private readonly hns: HnsHealth;
  private readonly clock: { now: () => number; monotonic: () => number };
  private readonly health = new Map<string, NetworkHealth>();
  private readonly unserved = new Map<string, NodeAgentStatus['unserved']>();
  private readonly probeMs: number;
  private readonly tickMs: number;

  constructor(private readonly options: NodeAgentOptions) {
    this.probeMs = options.probeMs ?? 5000;
    this.tickMs = options.tickMs ?? 1000;
    this.clock = options.clock ?? { now: Date.now, monotonic: () => performance.now() };
    this.hns = options.health ?? new HnsHealth(this.clock.now);
    // A call that HNS answers again (a verb's, the probe's) runs the recovery pass now rather than at the next tick.
    this.hns.onAnswering(() => this.wake());
  }

  start(): void {
    this.schedule();
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  /**
   * HNS said so itself (its service notifications, src/hns/service-notifications.ts): gone, which starts the recovery
   * watch as a failed call does; or back, which probes it now (the probe's answer runs the recovery pass).
   */
  hnsNotified(event: 'disconnected' | 'reconnected'): void {
    this.hns.failing();
    if (event === 'reconnected') this.wake();
  }

  /** The next pass now rather than at the next tick. */
  private wake(): void {
    if (this.stopped) return;
    this.woken = true;
    if (this.running) return; // the pass in progress schedules the next one at once
    clearTimeout(this.timer);
    this.schedule();
  }

  /** The doctor's last findings by kind and severity (none without a doctor). */
  findingCounts(): ReturnType<NodeDoctor['counts']> {
    return this.options.doctor?.counts() ?? [];
  }

  status(): NodeAgentStatus {
    return {
      audits: this.audits,
      ...(this.lastAuditAt !== undefined ? { lastAuditAt: new Date(this.lastAuditAt).toISOString() } : {}),
      ...(this.hns.failingSince !== undefined
        ? { hnsFailingSince: new Date(this.hns.failingSince).toISOString() }
        : {}),
      health: [...this.health.values()],
      unserved: [...this.unserved.values()].flat(),
      ...(this.options.doctor ? { unattachedSince: this.options.doctor.unattachedSince() } : {}),
    };
  }

  private schedule(): void {
    if (this.stopped) return;
    const delay = this.woken ? 0 : this.tickMs;
    this.woken = false;
    this.timer = setTimeout(() => {
      this.running = true;
      this.pass = this.tick()
        .catch((e: unknown) => this.options.log.error({ err: (e as Error).message }, 'node agent: pass failed'))
        .finally(() => {
          this.running = false;
          this.schedule();
        });
    }, delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    // The configuration directory is the truth for what it names: edits replace, removals stop (servedFromDir).
    if (this.options.discover) this.options.served.fromDir(this.options.discover());
    const all = this.options.served.contexts();
    this.forgetUnserved(all);
    // A network served with `"audit": false` and no repair is left alone: the operator turned its background work off.
    const served = all.filter((s) => s.conf.audit || (s.conf.repair && this.options.repair !== undefined));
    if (served.length === 0) return;
    // Failing: probe every tick until it answers; answering: every probeMs. An unanswered probe waits for the next tick.
    if ((this.hns.failingSince !== undefined || this.probeDue()) && !(await this.probe(served[0]!.conf))) return;
    const recovered = this.hns.takeRecovery();
    if (recovered) this.options.log.info({}, 'node agent: HNS answers again; auditing every state directory');
    for (const group of byStateDir(served)) {
      if (!recovered && !this.due(group)) continue;
      if (!(await this.visit(group))) return;
    }
  }

  /** The health reported of networks no longer served (their conflist removed) goes with them. */
  private forgetUnserved(all: readonly Served[]): void {
    const keys = new Set(all.map((s) => `${s.conf.stateDir}\0${s.conf.name}`));
    for (const key of this.health.keys()) if (!keys.has(key)) this.health.delete(key);
  }

  /** Whether the probe of an answering HNS is due (probeMs 0: never, the verbs' calls tell). */
  private probeDue(): boolean {
    const now = this.clock.monotonic();
    if (this.probeMs <= 0 || (this.lastProbe !== undefined && now - this.lastProbe < this.probeMs)) return false;
    this.lastProbe = now;
    return true;
  }

  /** Whether a directory's audit (or, with its audit off, its health check) is due: audit-due.ts. */
  private due(group: readonly Served[]): boolean {
    const auditing = group.find((s) => s.conf.audit);
    const confs = group.map((s) => s.conf);
    if (!auditing) {
      const dir = group[0]!.conf.stateDir;
      return auditDue({ by: 'timer' }, confs, () => this.lastVisited.get(dir), this.clock.monotonic());
    }
    const stamp = () => this.options.deps.stores.store(auditing.conf, this.options.log).lastAudited();
    return auditDue({ by: 'timer' }, confs, stamp, this.clock.now());
  }

  /** One state directory: its audit (when on), kept IPs released, every network's health, repairs; false: HNS down. */
  private async visit(group: readonly Served[]): Promise<boolean> {
    const dir = group[0]!.conf.stateDir;
    try {
      const auditing = group.filter((s) => s.conf.audit);
      // The doctor looks first: its audit findings are then what this audit is about to do (its dry run), and
      // everything the visit reports (the audit count, the pods' health) is there once it has looked.
      await this.lookFirst(group[0]!);
      if (auditing.length > 0) await this.auditDir(auditing);
      this.noteUnserved(group);
      for (const s of group) await this.checkHealth(s);
      return true;
    } catch (e) {
      if (isUnreachable(hcnCause(e))) {
        this.hns.failing();
        return false;
      }
      this.options.log.child({ stateDir: dir }).error({ err: (e as Error).message }, 'node agent: audit failed');
      return true;
    } finally {
      this.lastVisited.set(dir, this.clock.monotonic());
    }
  }

  /** The doctor's look (node-doctor.ts): what it fails at is logged, never the visit's failure (the audit still runs). */
  private async lookFirst(s: Served): Promise<void> {
    try {
      await this.options.doctor?.run(s.conf, log(this.options.log, s));
    } catch (e) {
      this.options.log
        .child({ stateDir: s.conf.stateDir })
        .warn({ err: (e as Error).message }, 'node agent: doctor failed');
    }
  }

  /** The directory's audit (once, whichever network asks), then each auditing network's kept IPs released. */
  private async auditDir(auditing: readonly Served[]): Promise<void> {
    const { deps } = this.options;
    const first = auditing[0]!;
    const dirLog = log(this.options.log, first);
    const { api } = await deps.hns.api(first.conf);
    const store = deps.stores.store(first.conf, dirLog);
    const report: AuditReport = await deps.auditor.audit({ conf: first.conf, api, store, log: dirLog });
    this.audits++;
    this.lastAuditAt = this.clock.now();
    for (const s of auditing)
      await releasePendingIpam(store, { ipam: s.ipam, network: s.conf.name, log: log(this.options.log, s) }, report);
  }

  /** One network's pods judged, kept for the status, and handed to its repair when configured. */
  private async checkHealth(s: Served): Promise<void> {
    const { deps } = this.options;
    const netLog = log(this.options.log, s);
    const { api } = await deps.hns.api(s.conf);
    const records = ofNetwork(deps.stores.store(s.conf, netLog).snapshot().attachments, s.conf);
    const verdicts = records.length > 0 ? await judgePods(api, records, await api.listEndpoints()) : [];
    const unhealthy = verdicts.filter((v) => v.problem);
    const key = `${s.conf.stateDir}\0${s.conf.name}`;
    if (unhealthy.length > 0) {
      netLog.warn(
        { unhealthy: unhealthy.length, first: ownerKey(unhealthy[0]!.record), problem: unhealthy[0]!.problem },
        'node agent: pods without the network they need',
      );
    }
    if (s.conf.repair && this.options.repair) {
      const due = this.backoff.admit(key, unhealthy);
      if (due.length > 0) this.backoff.note(key, due, await this.options.repair(s, due));
    }
    this.health.set(key, {
      stateDir: s.conf.stateDir,
      network: s.conf.name,
      checkedAt: new Date(this.clock.now()).toISOString(),
      counts: countByHealth(verdicts),
      unhealthy: unhealthy.slice(0, MAX_NAMED).map((v) => {
        const backoff = this.backoff.of(key, ownerKey(v.record));
        return {
          attachment: ownerKey(v.record),
          problem: v.problem!,
          ...(v.detail ? { detail: v.detail } : {}),
          ...(backoff ? { repairBackoff: backoff } : {}),
        };
      }),
    });
  }

  /** Records and kept IPs of networks in this directory that no served configuration names: reported, not acted on. */
  private noteUnserved(group: readonly Served[]): void {
    const first = group[0]!;
    const names = new Set(group.map((s) => s.conf.name));
    const state = this.options.deps.stores.store(first.conf, this.options.log).snapshot();
    const found = new Map<string, { attachments: number; keptIps: number }>();
    const other = (n: string | undefined) => n !== undefined && !names.has(n);
    for (const r of state.attachments) {
      if (!other(r.cniNetwork)) continue;
      const e = found.get(r.cniNetwork!) ?? { attachments: 0, keptIps: 0 };
      e.attachments++;
      found.set(r.cniNetwork!, e);
    }
    for (const t of state.tombstones) {
      if (!t.ipamPending || !other(t.cniNetwork)) continue;
      const e = found.get(t.cniNetwork!) ?? { attachments: 0, keptIps: 0 };
      e.keptIps++;
      found.set(t.cniNetwork!, e);
    }
    const list = [...found].map(([network, n]) => ({ stateDir: first.conf.stateDir, network, ...n }));
    if (list.length > 0 && JSON.stringify(list) !== JSON.stringify(this.unserved.get(first.conf.stateDir))) {
      this.options.log.warn(
        { stateDir: first.conf.stateDir, networks: list.map((n) => n.network) },
        'node agent: records of networks this service has no configuration for (not repaired, kept IPs not released)',
      );
    }
    this.unserved.set(first.conf.stateDir, list);
  }

  /** Whether HNS answers; a failure marks it failing (and other errors are logged, not fatal). */
  private async probe(conf: NetConf): Promise<boolean> {
    try {
      await this.options.deps.hns.hcn(conf).enumerateNetworks();
      this.hns.answered();
      return true;
    } catch (e) {
      if (isUnreachable(e)) this.hns.failing();
      else this.options.log.warn({ err: (e as Error).message }, 'node agent: HNS probe failed');
      return !isUnreachable(e);
    }
  }
}

/** The served configurations grouped by state directory, in the order first served. */
function byStateDir(served: readonly Served[]): Served[][] {
  const groups = new Map<string, Served[]>();
  for (const s of served) groups.set(s.conf.stateDir, [...(groups.get(s.conf.stateDir) ?? []), s]);
  return [...groups.values()];
}

const log = (l: Logger, s: Served): Logger => l.child({ stateDir: s.conf.stateDir, cniNetwork: s.conf.name });
