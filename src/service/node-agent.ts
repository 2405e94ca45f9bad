/**
 * The resident service's background work for the node: the whole node's leak audit, so that no ADD has to list
 * every network and endpoint (src/plugin/audit-due.ts), and a node without pod churn still loses its leaks.
 *
 * - Per state directory the service has served (PluginRuntime.servedContexts: the latest configuration and IPAM
 *   client of each), an audit once the last one — by this agent, or by any process, GC or `hcn-cni audit`
 *   (StateStore.lastAudited) — is auditIntervalSeconds old. A directory served with `"audit": false` is not
 *   audited (the operator turned it off); with `"repair": true` beside it, it still gets `repair` on the same
 *   interval (kept here, per directory, since no audit stamps it), else it is left alone.
 * - HNS failing is noticed from every HCN call the service makes (the runtime's call observer: an RPC failure or a
 *   timeout) and from a cheap probe of its own (one HcnEnumerateNetworks, ids only, every probeMs). Once HNS answers
 *   again, every directory is audited (a repair-only one repaired) at once: an HNS restart drops endpoints and
 *   non-persistent networks (docker/for-win issue 12425, projectcalico/calico issue 5164), and creates in flight at
 *   the restart may have half happened.
 * - After an audit, the IPs DELs had to keep (their endpoints now gone) are released through that directory's IPAM
 *   (pending-ipam.ts), and `afterAudit` runs (repair, when configured).
 * - One pass at a time; audits run beside the verbs, as separate processes would (the intents make that safe).
 */
import type { IpamClient, NetConf } from '../cni/types';
import { isUnreachable, unreachableHresult } from '../hns/hcn-error';
import type { Logger } from '../log/logger';
import { releasePendingIpam } from '../plugin/pending-ipam';
import type { PluginRuntime } from '../plugin/runtime';

type AuditReport = Awaited<ReturnType<PluginRuntime['audit']>>;

export interface NodeAgentOptions {
  runtime: PluginRuntime;
  log: Logger;
  /**
   * How often HNS is probed while it answers (default 5 s; 0: never, only the verbs' calls tell), and how often the
   * due audits are looked for (1 s).
   */
  probeMs?: number;
  tickMs?: number;
  /** Runs after each directory's audit (the service's repair). */
  afterAudit?: (served: { conf: NetConf; ipam: IpamClient }, report: AuditReport) => Promise<void>;
  /**
   * Runs, in place of the audit, for a directory served with `"audit": false, "repair": true`: on its
   * auditIntervalSeconds and after HNS answers again, as an audit would (the service's repair). Absent: such a
   * directory is left alone.
   */
  repair?: (served: { conf: NetConf; ipam: IpamClient }) => Promise<void>;
}

type Served = { conf: NetConf; ipam: IpamClient };

export interface NodeAgentStatus {
  /** Whole-node audits this agent ran, and when the last one finished (ISO), if any. */
  audits: number;
  lastAuditAt?: string;
  /** Since when HNS has been seen failing (ISO); absent while it answers. */
  hnsFailingSince?: string;
}

/** The interval of a configuration whose own is 0 ("every ADD"): the agent still audits the quiet node. */
const FALLBACK_INTERVAL_S = 60;

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
  /** When each unaudited directory (by state directory) last had its repair: no audit stamp tells. */
  private readonly lastRepaired = new Map<string, number>();
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
    const { runtime: rt } = this.options;
    const served = rt.servedContexts().filter((s) => s.conf.audit || this.repairsOnly(s));
    if (served.length === 0) return;
    const now = Date.now();
    if (this.failingSince === undefined && this.probeMs > 0 && now - this.lastProbe >= this.probeMs) {
      this.lastProbe = now;
      await this.probe(served[0]!.conf);
    }
    if (this.failingSince !== undefined) {
      // Recovered? Then every directory at once; else wait for the next tick.
      if (!(await this.probe(served[0]!.conf))) return;
      this.options.log.info({}, 'node agent: HNS answers again; auditing every state directory');
      this.failingSince = undefined;
      for (const s of served) if (!(await this.visit(s))) return;
      return;
    }
    for (const s of served) {
      const interval = (s.conf.auditIntervalSeconds || FALLBACK_INTERVAL_S) * 1000;
      const last = s.conf.audit
        ? rt.store(s.conf, this.options.log).lastAudited()
        : this.lastRepaired.get(s.conf.stateDir);
      if (last !== undefined && now - last < interval && now >= last) continue;
      if (!(await this.visit(s))) return;
    }
  }

  /** A directory whose audit is off and whose repair is on (and the service gave the agent its repair). */
  private repairsOnly(s: Served): boolean {
    return !s.conf.audit && s.conf.repair && this.options.repair !== undefined;
  }

  /** The directory's audit and what follows it, or its repair alone when its audit is off; false as auditOne. */
  private async visit(s: Served): Promise<boolean> {
    if (s.conf.audit) return this.auditOne(s);
    try {
      await this.options.repair?.(s);
    } catch (e) {
      if (isUnreachable(e) || isUnreachable((e as { cause?: unknown }).cause)) {
        this.failingSince ??= Date.now();
        return false;
      }
      log(this.options.log, s).error({ err: (e as Error).message }, 'node agent: repair failed');
    } finally {
      // Tried (the repair reports its own failures): the next one is an interval later, or when HNS answers again.
      this.lastRepaired.set(s.conf.stateDir, Date.now());
    }
    return true;
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

  /** One directory's audit and what follows it; false when HNS stopped answering (the pass ends). */
  private async auditOne(s: Served): Promise<boolean> {
    const { runtime: rt } = this.options;
    const { conf } = s;
    const dirLog = log(this.options.log, s);
    try {
      const { api } = await rt.api(conf);
      const store = rt.store(conf, dirLog);
      const report = await rt.audit(conf, api, store, dirLog);
      this.audits++;
      this.lastAuditAt = Date.now();
      await releasePendingIpam(store, s.ipam, conf.name, report, dirLog);
      await this.options.afterAudit?.(s, report);
      return true;
    } catch (e) {
      if (isUnreachable(e) || isUnreachable((e as { cause?: unknown }).cause)) {
        this.failingSince ??= Date.now();
        return false;
      }
      dirLog.error({ err: (e as Error).message }, 'node agent: audit failed');
      return true;
    }
  }
}

const log = (l: Logger, s: Served): Logger => l.child({ stateDir: s.conf.stateDir, cniNetwork: s.conf.name });
