/**
 * What the verbs share within one process: the addon (loaded on first use, so VERSION never loads it), the API
 * choice (made once: it is a property of the host), and state stores per directory.
 */
import type { IpamClient, NetConf } from '../cni/types';
import type { HnsApi, Listing, NetworkInfo } from '../hns/api';
import { Hcn } from '../hns/hcn';
import { hostOs, type HostOs } from '../hns/host-os';
import type { LoadOptions } from '../hns/native';
import type { NativeHcn } from '../hns/native-types';
import type { Logger } from '../log/logger';
import { audit, auditShown, graceMs, type AuditDeps, type AuditReport, type Shown } from '../orphans/audit';
import type { SweepResult } from '../orphans/sweep';
import type { CrashHook } from '../state/atomic';
import { ClaimRegistry } from '../state/claims';
import { StateStore, type StateSnapshot } from '../state/store';
import { AddressBook } from './address-book';
import { chooseApi, type ApiChoice } from './api-version';
import { HeldHandles } from '../hns/held-handles';
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
  /**
   * The whole node's audit runs in the background (the resident service's node agent, src/service/agent/node-agent.ts):
   * ADD never runs it when due, only its own safety work (own-objects.ts). Default false: the standalone executable.
   */
  backgroundAudit?: boolean;
  /**
   * The fewest HNS round trips per verb (the resident service), through the API the host chose: HCN handles kept
   * between verbs (src/hns/held-handles.ts), and a DEL that releases an address by what this process knows of its
   * holders (address-book.ts) instead of listing the node. Default false: the standalone executable, which runs
   * one verb and knows nothing between them.
   */
  fewestCalls?: boolean;
}

type AuditConf = Pick<NetConf, 'hnsTimeoutSeconds' | 'adopt'>;

/** What an audit a verb runs looks at: its configuration's opt-ins, HNS, the state store, the log. */
interface AuditOn {
  readonly conf: AuditConf;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly log: Logger;
}
/** A configuration served for background work, with the IPAM client its kept IPs are released through. */
type Served = { conf: NetConf; ipam: IpamClient };

/** Served configurations are kept per CNI network of each state directory. */
const servedKey = (conf: Pick<NetConf, 'stateDir' | 'name'>): string => `${conf.stateDir}\0${conf.name}`;

/** State directories remembered for stateDirs, at most. */
const MAX_STATE_DIRS = 16;
/** Configurations (network and state directory) remembered for background work, at most. */
const MAX_SERVED = 64;

export class PluginRuntime {
  private hcnInstance: Hcn | undefined;
  private readonly choices = new Map<string, Promise<ApiChoice>>();
  private osInstance: HostOs | undefined;
  private readonly dirs = new Set<string>();
  private readonly confs = new Map<string, Served>();
  /** The runtime's configuration directory as last read, by the same key (servedFromDir): each one's text. */
  private readonly fromDir = new Map<string, string>();
  /** Shared (bridge) networks found by name, per API version: HNS is asked again once a create says it is gone. */
  private readonly networks = new Map<string, NetworkInfo>();
  readonly now: () => number;
  readonly pid: number;
  readonly crash: CrashHook | undefined;
  /** Who holds which address, as this process knows it (fewestCalls only; address-book.ts). */
  readonly addressBook: AddressBook | undefined;
  /** HCN handles kept between verbs (fewestCalls only; src/hns/held-handles.ts). */
  readonly heldHandles: HeldHandles | undefined;

  constructor(private readonly options: RuntimeOptions) {
    this.now = options.now ?? Date.now;
    this.pid = options.pid;
    this.crash = options.crash;
    this.addressBook = options.fewestCalls ? new AddressBook() : undefined;
    this.heldHandles = options.fewestCalls ? new HeldHandles() : undefined;
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
    // Bounded: a scrape reads each of them (src/service/observability/tally.ts); real nodes have one or two.
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
   * Remembers the configuration (and IPAM client) a verb runs with — the latest per CNI network of each state
   * directory (at most MAX_SERVED) — and hands the context back. Background work covers every one of them: several
   * conflists may share one state directory, and each network's records are repaired with its own configuration and
   * the IPs its DELs had to keep are released through its own IPAM.
   */
  served<C extends Served>(ctx: C): C {
    this.serve(servedKey(ctx.conf), ctx);
    return ctx;
  }

  /**
   * The runtime's configuration directory as just read (src/service/agent/conf-dir.ts), the truth for the networks it names.
   * One it names for the first time is served unless a verb brought it already: the runtime read that same file, and
   * the verb's carries the runtime's own CNI_PATH for its IPAM. One whose text changed since the last read (the
   * operator edited it) replaces what is served, whoever brought it — a verb's was read before the edit. One it no
   * longer names (removed) is no longer served, whoever brought it: no audit, health check or repair for it until a
   * verb of it comes again (the runtime still using it, from another directory or its own copy).
   */
  servedFromDir(read: readonly Served[]): void {
    const now = new Map(read.map((s) => [servedKey(s.conf), s] as const));
    for (const key of this.fromDir.keys()) {
      if (now.has(key)) continue;
      this.fromDir.delete(key);
      this.confs.delete(key);
    }
    for (const [key, s] of now) {
      const text = JSON.stringify(s.conf);
      const before = this.fromDir.get(key);
      this.fromDir.set(key, text);
      if (before === text || (before === undefined && this.confs.has(key))) continue;
      this.serve(key, s);
    }
  }

  private serve(key: string, { conf, ipam }: Served): void {
    if (this.confs.has(key) || this.confs.size < MAX_SERVED) {
      this.confs.delete(key);
      this.confs.set(key, { conf, ipam });
    }
  }

  /** The latest configuration served per network and state directory (see served), oldest first. */
  servedConfs(): NetConf[] {
    return [...this.confs.values()].map((s) => s.conf);
  }

  /** The latest configuration and IPAM client served per network and state directory, oldest first. */
  servedContexts(): ReadonlyArray<{ conf: NetConf; ipam: IpamClient }> {
    return [...this.confs.values()];
  }

  /** Whether a node agent audits the whole node, so that ADD does not (RuntimeOptions.backgroundAudit). */
  get backgroundAudit(): boolean {
    return this.options.backgroundAudit === true;
  }

  /**
   * A shared network this process found before (by API version and name). Only a hint for the endpoint's create: a
   * network deleted since makes the create fail with "not found", and the caller forgets it and asks HNS again.
   */
  knownNetwork(version: 1 | 2, name: string): NetworkInfo | undefined {
    return this.networks.get(`${version}:${name}`);
  }

  rememberNetwork(version: 1 | 2, network: NetworkInfo | undefined, name = network?.name): void {
    if (name === undefined) return;
    if (network) {
      // Bounded as the state directories are: a node has one or two shared networks.
      if (this.networks.size >= MAX_STATE_DIRS) this.networks.clear();
      this.networks.set(`${version}:${name}`, network);
    } else this.networks.delete(`${version}:${name}`);
  }

  get claimsDir(): string | undefined {
    return this.options.claimsDir;
  }

  /** The state directories the verbs of this process have used (a service counts their records for its metrics). */
  get stateDirs(): readonly string[] {
    return [...this.dirs];
  }

  /** The audit of this node as a verb runs it (ADD, GC): the configuration's grace and opt-ins; the observer told. */
  async audit(conf: AuditConf, api: HnsApi, store: StateStore, log: Logger): Promise<AuditReport> {
    const mark = this.addressBook?.mark();
    const report = await audit(this.auditDeps(conf, api, store, log));
    // The listing minus what the audit deleted: what holds an address now.
    if (mark !== undefined) this.addressBook?.listing(mark, report.endpoints);
    this.audited(report);
    return report;
  }

  /** The audit of a few objects HNS showed (orphans/audit.ts auditShown), by the same rules; the observer told. */
  async auditShown(on: AuditOn, shown: Shown, state: StateSnapshot): Promise<SweepResult> {
    const outcome = await auditShown(this.auditDeps(on.conf, on.api, on.store, on.log), shown, state);
    for (const d of outcome.sweep.deleted) if (d.kind === 'endpoint') this.addressBook?.deleted(d.id);
    this.audited(outcome);
    return outcome.sweep;
  }

  private auditDeps(conf: AuditConf, api: HnsApi, store: StateStore, log: Logger): AuditDeps {
    return {
      api,
      store,
      os: this.os(),
      log,
      now: this.now,
      graceMs: graceMs(conf.hnsTimeoutSeconds),
      adopt: conf.adopt,
    };
  }

  /** Tells the observer, if any, how an audit ended. */
  audited(report: Pick<AuditReport, 'counts' | 'sweep'> & Partial<Pick<AuditReport, 'housekeeping'>>): void {
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
      choice = chooseApi(conf.apiVersion, hcn, this.options.listing, this.heldHandles);
      choice.catch(() => this.choices.delete(key));
      this.choices.set(key, choice);
    }
    const chosen = await choice;
    return { ...chosen, api: chosen.api.withHcn(hcn) };
  }
}
