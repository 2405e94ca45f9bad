/**
 * What the verbs share within one process: the addon (loaded on first use, so VERSION never loads it), the API
 * choice (made once: it is a property of the host), and state stores per directory.
 */
import type { NetConf } from '../cni/types';
import type { HnsApi, Listing } from '../hns/api';
import { Hcn } from '../hns/hcn';
import { hostOs, type HostOs } from '../hns/host-os';
import type { LoadOptions } from '../hns/native';
import type { NativeHcn } from '../hns/native-types';
import type { Logger } from '../log/logger';
import { audit, graceMs, type AuditReport } from '../orphans/audit';
import type { CrashHook } from '../state/atomic';
import { ClaimRegistry } from '../state/claims';
import { StateStore } from '../state/store';
import { chooseApi, type ApiChoice } from './api-version';
import { auditObservation, type RuntimeObserver } from './observer';

export interface RuntimeOptions {
  /** Where to find the addon and the HCN library. */
  load?: LoadOptions;
  /** An already loaded addon (tests, or a host that embeds the plugin). */
  native?: NativeHcn;
  now?: () => number;
  /** This process, as intents record it. */
  pid: number;
  /** Test builds only: called at every state write point (crash-point matrix). */
  crash?: CrashHook;
  /** How V2Api lists all objects (default auto: one v1 GET when HNSCall exists). */
  listing?: Listing;
  /** The node-wide register of live claims (src/state/claims.ts); none when undefined. */
  claimsDir?: string;
  /** Told of every HCN call and audit (the resident service's metrics); none in the standalone executable. */
  observer?: RuntimeObserver;
}

/** State directories remembered for stateDirs, at most. */
const MAX_STATE_DIRS = 16;

export class PluginRuntime {
  private hcnInstance: Hcn | undefined;
  private readonly choices = new Map<string, Promise<ApiChoice>>();
  private osInstance: HostOs | undefined;
  private readonly dirs = new Set<string>();
  private readonly confs = new Map<string, NetConf>();
  readonly now: () => number;
  readonly pid: number;
  readonly crash: CrashHook | undefined;

  constructor(private readonly options: RuntimeOptions) {
    this.now = options.now ?? Date.now;
    this.pid = options.pid;
    this.crash = options.crash;
  }

  /**
   * The HCN facade with this request's time limit. The addon is loaded once; each call gets a facade of its own
   * timeout, so requests running at once in the service (src/service) each keep their hnsTimeoutSeconds.
   */
  hcn(conf: Pick<NetConf, 'hnsTimeoutSeconds'>): Hcn {
    const timeoutMs = conf.hnsTimeoutSeconds * 1000;
    if (!this.hcnInstance) {
      const observer = this.options.observer?.hcnCall;
      const options = { timeoutMs, ...(observer ? { observer } : {}) };
      if (this.options.native) {
        const native = this.options.native;
        this.hcnInstance = new Hcn(native, native.capabilities(), options);
      } else {
        this.hcnInstance = Hcn.open({ ...options, ...(this.options.load ? { load: this.options.load } : {}) });
      }
    }
    return this.hcnInstance.withTimeout(timeoutMs);
  }

  os(): HostOs {
    this.osInstance ??= hostOs(this.options.native, this.options.load);
    return this.osInstance;
  }

  store(conf: Pick<NetConf, 'stateDir'>, log: Logger): StateStore {
    // Bounded: a scrape reads each of them (src/service/tally.ts); real nodes have one or two.
    if (this.dirs.size < MAX_STATE_DIRS) this.dirs.add(conf.stateDir);
    return new StateStore(conf.stateDir, {
      os: this.os(),
      now: this.now,
      log,
      ...(this.crash ? { crash: this.crash } : {}),
      ...(this.options.claimsDir ? { registry: new ClaimRegistry(this.options.claimsDir) } : {}),
    });
  }

  /**
   * Remembers the configuration a verb runs with, the latest per state directory (at most MAX_STATE_DIRS), and
   * hands the context back. The state directory is what background work is per: its records, its audit.
   */
  served<C extends { conf: NetConf }>(ctx: C): C {
    const dir = ctx.conf.stateDir;
    if (this.confs.has(dir) || this.confs.size < MAX_STATE_DIRS) {
      this.confs.delete(dir);
      this.confs.set(dir, ctx.conf);
    }
    return ctx;
  }

  /** The latest configuration served per state directory (see served), oldest first. */
  servedConfs(): NetConf[] {
    return [...this.confs.values()];
  }

  get claimsDir(): string | undefined {
    return this.options.claimsDir;
  }

  /** The state directories the verbs of this process have used (a service counts their records for its metrics). */
  get stateDirs(): readonly string[] {
    return [...this.dirs];
  }

  /** The audit of this node as a verb runs it (ADD, GC): the configuration's grace and opt-ins; the observer told. */
  async audit(conf: Pick<NetConf, 'hnsTimeoutSeconds' | 'adopt'>, api: HnsApi, store: StateStore, log: Logger) {
    const report = await audit({
      api,
      store,
      os: this.os(),
      log,
      now: this.now,
      graceMs: graceMs(conf.hnsTimeoutSeconds),
      adopt: conf.adopt,
    });
    this.audited(report);
    return report;
  }

  /** Tells the observer, if any, how an audit ended. */
  audited(report: AuditReport): void {
    const observe = this.options.observer?.audit;
    if (!observe) return;
    try {
      observe(auditObservation(report));
    } catch {
      // an observer's failure is not the verb's
    }
  }

  /**
   * The HNS API for this host, decided once per process (per apiVersion setting), over a facade with this request's
   * time limit.
   */
  async api(conf: Pick<NetConf, 'apiVersion' | 'hnsTimeoutSeconds'>): Promise<ApiChoice> {
    const hcn = this.hcn(conf);
    const key = String(conf.apiVersion);
    let choice = this.choices.get(key);
    if (!choice) {
      choice = chooseApi(conf.apiVersion, hcn, this.options.listing);
      choice.catch(() => this.choices.delete(key));
      this.choices.set(key, choice);
    }
    const chosen = await choice;
    return { ...chosen, api: chosen.api.withHcn(hcn) };
  }
}
