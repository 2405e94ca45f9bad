/**
 * The resident service's background work for the node: the whole node's leak audit, so that no ADD has to list
 * every network and endpoint (src/plugin/audit-due.ts), and a node without pod churn still loses its leaks.
 *
 * - Per state directory the service has served (PluginRuntime.servedContexts: the latest configuration and IPAM
 *   client of each network in it), an audit once the last one — by this agent, or by any process, GC or `hcn-cni audit`
 *   (StateStore.lastAudited) — is auditIntervalSeconds old. A directory served with `"audit": false` is not
 *   audited (the operator turned it off); with `"repair": true` beside it, it still gets `repair` on the same
 *   interval (kept here, per directory, since no audit stamps it), else it is left alone.
 * - HNS failing is noticed from every HCN call the service makes (the runtime's call observer: an RPC failure or a
 *   timeout) and from a cheap probe of its own (one HcnEnumerateNetworks, ids only, every probeMs). Once HNS answers
 *   again, every directory is audited (a repair-only one repaired) at once: an HNS restart drops endpoints and
 *   non-persistent networks (docker/for-win issue 12425, projectcalico/calico issue 5164), and creates in flight at
 *   the restart may have half happened.
 * - After an audit, the IPs DELs had to keep (their endpoints now gone) are released through each network's own IPAM
 *   (pending-ipam.ts). Then every network of the directory has its pods' health checked (pod-health.ts: endpoint
 *   there, attached as recorded, not failed in HNS), kept for `hcn-cni service`, the metrics and STATUS, and handed to
 *   `repair` for the networks configured with `repair: true`. Records of a network no configuration of this service
 *   names are reported (unserved), never guessed at.
 * - One pass at a time; audits run beside the verbs, as separate processes would (the intents make that safe).
 */
import type { IpamClient, NetConf } from '../cni/types';
import { hcnCause, isUnreachable, unreachableHresult } from '../hns/hcn-error';
import type { Logger } from '../log/logger';
import { releasePendingIpam } from '../plugin/pending-ipam';
import { countByHealth, judgePods, type PodProblem, type PodVerdict } from '../plugin/pod-health';
import { ofNetwork } from '../plugin/repair';
import type { PluginRuntime } from '../plugin/runtime';
import { ownerKey } from '../state/records';

type AuditReport = Awaited<ReturnType<PluginRuntime['audit']>>;
type Served = { conf: NetConf; ipam: IpamClient };

export interface NodeAgentOptions {
  runtime: PluginRuntime;
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
  repair?: (served: Served, verdicts: readonly PodVerdict[]) => Promise<void>;
}

/** One network's pods by health, as the last check found them. */
export interface NetworkHealth {
  stateDir: string;
  network: string;
  checkedAt: string;
  counts: Record<'healthy' | PodProblem, number>;
  /** The unhealthy pods (at most MAX_NAMED), by containerId@ifname. */
  unhealthy: Array<{ attachment: string; problem: PodProblem; detail?: string }>;
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
}

/** The interval of a configuration whose own is 0 ("every ADD"): the agent still audits the quiet node. */
const FALLBACK_INTERVAL_S = 60;
/** Unhealthy pods named per network in the status (the counts cover all). */
const MAX_NAMED = 20;

export class NodeAgent {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private running = false;
  private woken = false;
  private stopped = false;
  private failingSince: number | undefined;
  private lastProbe = 0;
  private audits = 0;
  private lastAuditAt: number | undefined;
  /** When each directory whose audit is off was last visited (no audit stamp tells). */
  private readonly lastVisited = new Map<string, number>();
  private readonly health = new Map<string, NetworkHealth>();
  private readonly unserved = new Map<string, NodeAgentStatus['unserved']>();
  private readonly probeMs: number;
  private readonly tickMs: number;

  constructor(private readonly options: NodeAgentOptions) {
    this.probeMs = options.probeMs ?? 5000;
    this.tickMs = options.tickMs ?? 1000;
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

  /** Told of every HCN call's outcome (the runtime's observer): an unreachable HNS starts the recovery watch. */
  hcnCall(hresult: number | undefined): void {
    if (unreachableHresult(hresult)) this.failingSince ??= Date.now();
  }

  /**
   * HNS said so itself (its service notifications, src/hns/service-notifications.ts): gone, which starts the recovery
   * watch as a failed call does; or back, which runs the recovery pass now rather than at the next tick.
   */
  hnsNotified(event: 'disconnected' | 'reconnected'): void {
    this.failingSince ??= Date.now();
    if (event !== 'reconnected' || this.stopped) return;
    this.woken = true;
    if (this.running) return; // the pass in progress schedules the next one at once
    clearTimeout(this.timer);
    this.schedule();
  }

  status(): NodeAgentStatus {
    return {
      audits: this.audits,
      ...(this.lastAuditAt !== undefined ? { lastAuditAt: new Date(this.lastAuditAt).toISOString() } : {}),
      ...(this.failingSince !== undefined ? { hnsFailingSince: new Date(this.failingSince).toISOString() } : {}),
      health: [...this.health.values()],
      unserved: [...this.unserved.values()].flat(),
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
    for (const s of this.options.discover?.() ?? []) this.options.runtime.served(s, { ifAbsent: true });
    // A network served with `"audit": false` and no repair is left alone: the operator turned its background work off.
    const served = this.options.runtime
      .servedContexts()
      .filter((s) => s.conf.audit || (s.conf.repair && this.options.repair !== undefined));
    if (served.length === 0) return;
    const now = Date.now();
    if (this.failingSince === undefined && this.probeMs > 0 && now - this.lastProbe >= this.probeMs) {
      this.lastProbe = now;
      await this.probe(served[0]!.conf);
    }
    const recovered = this.failingSince !== undefined;
    if (recovered) {
      // Recovered? Then every directory at once; else wait for the next tick.
      if (!(await this.probe(served[0]!.conf))) return;
      this.options.log.info({}, 'node agent: HNS answers again; auditing every state directory');
      this.failingSince = undefined;
    }
    for (const group of byStateDir(served)) {
      if (!recovered && !this.due(group, now)) continue;
      if (!(await this.visit(group))) return;
    }
  }

  /** Whether a directory's audit (or, with its audit off, its health check) is an interval old. */
  private due(group: readonly Served[], now: number): boolean {
    const interval = Math.min(...group.map((s) => s.conf.auditIntervalSeconds || FALLBACK_INTERVAL_S)) * 1000;
    const auditing = group.find((s) => s.conf.audit);
    const last = auditing
      ? this.options.runtime.store(auditing.conf, this.options.log).lastAudited()
      : this.lastVisited.get(group[0]!.conf.stateDir);
    // A last time in the future (the clock stepped back) counts as due: a step may cost an audit, never skip them.
    return last === undefined || now - last >= interval || now < last;
  }

  /** One state directory: its audit (when on), kept IPs released, every network's health, repairs; false: HNS down. */
  private async visit(group: readonly Served[]): Promise<boolean> {
    const dir = group[0]!.conf.stateDir;
    try {
      const auditing = group.filter((s) => s.conf.audit);
      if (auditing.length > 0) await this.auditDir(auditing);
      this.noteUnserved(group);
      for (const s of group) await this.checkHealth(s);
      return true;
    } catch (e) {
      if (isUnreachable(hcnCause(e))) {
        this.failingSince ??= Date.now();
        return false;
      }
      this.options.log.child({ stateDir: dir }).error({ err: (e as Error).message }, 'node agent: audit failed');
      return true;
    } finally {
      this.lastVisited.set(dir, Date.now());
    }
  }

  /** The directory's audit (once, whichever network asks), then each auditing network's kept IPs released. */
  private async auditDir(auditing: readonly Served[]): Promise<void> {
    const { runtime: rt } = this.options;
    const first = auditing[0]!;
    const dirLog = log(this.options.log, first);
    const { api } = await rt.api(first.conf);
    const store = rt.store(first.conf, dirLog);
    const report: AuditReport = await rt.audit(first.conf, api, store, dirLog);
    this.audits++;
    this.lastAuditAt = Date.now();
    for (const s of auditing) await releasePendingIpam(store, s.ipam, s.conf.name, report, log(this.options.log, s));
  }

  /** One network's pods judged, kept for the status, and handed to its repair when configured. */
  private async checkHealth(s: Served): Promise<void> {
    const { runtime: rt } = this.options;
    const netLog = log(this.options.log, s);
    const { api } = await rt.api(s.conf);
    const records = ofNetwork(rt.store(s.conf, netLog).snapshot().attachments, s.conf);
    const verdicts = records.length > 0 ? await judgePods(api, records, await api.listEndpoints()) : [];
    const unhealthy = verdicts.filter((v) => v.problem);
    this.health.set(`${s.conf.stateDir}\0${s.conf.name}`, {
      stateDir: s.conf.stateDir,
      network: s.conf.name,
      checkedAt: new Date().toISOString(),
      counts: countByHealth(verdicts),
      unhealthy: unhealthy.slice(0, MAX_NAMED).map((v) => ({
        attachment: ownerKey(v.record),
        problem: v.problem!,
        ...(v.detail ? { detail: v.detail } : {}),
      })),
    });
    if (unhealthy.length > 0) {
      netLog.warn(
        { unhealthy: unhealthy.length, first: ownerKey(unhealthy[0]!.record), problem: unhealthy[0]!.problem },
        'node agent: pods without the network they need',
      );
      if (s.conf.repair) await this.options.repair?.(s, verdicts);
    }
  }

  /** Records and kept IPs of networks in this directory that no served configuration names: reported, not acted on. */
  private noteUnserved(group: readonly Served[]): void {
    const first = group[0]!;
    const names = new Set(group.map((s) => s.conf.name));
    const state = this.options.runtime.store(first.conf, this.options.log).snapshot();
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
      await this.options.runtime.hcn(conf).enumerateNetworks();
      return true;
    } catch (e) {
      if (isUnreachable(e)) this.failingSince ??= Date.now();
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
