/**
 * The simulator's engine: how calls are ordered, delayed, disturbed and committed.
 *
 * ORDERING MODEL (what lets the seed-000 bug reproduce — a create that outlives its caller):
 *
 * 1. Every call is ACCEPTED on arrival: it gets a sequence number, is counted and logged, and its fate no longer
 *    depends on the caller. A client that disconnects or dies never cancels an accepted call (HNS is a service; a
 *    create the CNI process started keeps going after that process is killed: Azure/azure-container-networking
 *    issue 4540, the HcnCreateNetwork of a killed ADD that completed after the runtime's DEL).
 * 2. READS (HcnEnumerate*, HcnOpen*, HcnQuery*Properties, HNSCall GET, HcnSimEnumerateAdapters) run concurrently,
 *    each after its own latency, against COMMITTED state. An object whose create has not committed is invisible to
 *    them: there is no public evidence that HNS shows half-created objects either way, so this is our assumption
 *    (the simpler model: a create is visible when it has returned).
 * 3. MUTATIONS (HcnCreate*, HcnModify*, HcnDelete*, HNSCall POST/DELETE) run ONE AT A TIME, in acceptance order, on a
 *    single executor (HNS serialises; Azure/azure-container-networking#3297). Each takes its configured latency and
 *    its whole effect — validation included — commits atomically at the end of it. So a second create of the same
 *    name queued behind a first one fails with HCN_E_NETWORK_ALREADY_EXISTS once the first commits.
 * 4. DELETE DURING CREATE: a delete naming an object whose create is queued or executing (and not yet committed)
 *    resolves by the race mode:
 *      delete-wins (default): the delete queues behind the create and removes the committed object;
 *      create-wins: the delete runs at once against committed state, finds nothing (0x803B0001 / 0x803B0002 /
 *                   0x80070490) and the create commits later — the leak of seed 000;
 *      random: a choice per race from a PRNG seeded by `race random --seed N`, reproducible.
 * 5. FAULTS are matched when a call is accepted (nth matching arrival): fail → the call runs its latency, then
 *    answers the given HRESULT with no effect; hang → it stalls when it starts executing (a hung mutation holds the
 *    whole mutation queue, reads are still served) for `ms` or until release, then completes normally; kill-client →
 *    the call is accepted and queued, then its caller's pid is SIGKILLed, so the object is still created.
 * 6. RESTART: every service-callback registration gets HcnNotificationServiceDisconnect and ends
 *    (service-callbacks.ts); every accepted, unfinished call fails with RPC_S_CALL_FAILED_DNE (0x800706BF) and has no effect; calls
 *    arriving in the next `downMs` fail the same way; non-persistent networks (flag 8) and all endpoints are gone,
 *    persistent networks and (unless `dropNamespaces`) namespaces stay — the sources, and the gap about namespaces,
 *    are at Store.restart (store.ts).
 *
 * busyMs is the length of the union of all calls' execution intervals (latency and hangs included): the time the
 * service was doing something, the denominator of a makespan benchmark.
 */
import { HR } from '../hns/hresults';
import { CallLog } from './call-log';
import { CallRunner } from './call-runner';
import type {
  FaultOptions,
  RaceMode,
  SimAdapter,
  SimCallRecord,
  SimDump,
  SimHost,
  SimOp,
  SimStats,
} from './control-types';
import { FaultBook } from './faults';
import { checkAdapter, checkLatency } from './host';
import { silentLogger, type Logger } from '../log/logger';
import { isPersistent } from './model';
import { planRequest } from './op-table';
import type { StateFile } from './persistence';
import type { Plan } from './plan';
import { seededRandom } from './rng';
import { ServiceCallbacks, type ServiceNotification } from './service-callbacks';
import { SimError, errorRecord } from './sim-error';
import { Store } from './store';
import { endpointV2, namespaceV2, networkV2 } from './views';
import type { OpRequest, OpResponse } from './wire-types';
import { staleHandle } from './stale-handles';

export interface EngineOptions {
  host: SimHost;
  stateFile?: StateFile;
  logger?: Logger;
}

/**
 * The simulator's front: accepts calls (submit), refuses those HNS would refuse on arrival, and hands the rest to the
 * call runner (call-runner.ts); the control connection's commands (latency, faults, race, restart, version,
 * adapters) and what it reads (stats, the call log, a dump) are here.
 */
export class Engine {
  readonly store: Store;
  readonly host: SimHost;
  private readonly logger: Logger;
  private readonly stateFile?: StateFile;
  private readonly faults = new FaultBook();
  private readonly log = new CallLog();
  private readonly runner: CallRunner;
  private seq = 0;
  private downUntil = 0;
  private restarts = 0;
  /** The service instance HCN handles belong to: a new one at each restart (stale-handles.ts). */
  boot = 1;
  private readonly serviceCallbacks = new ServiceCallbacks();
  private random: () => number;

  constructor(options: EngineOptions) {
    this.host = options.host;
    this.logger = options.logger ?? silentLogger;
    this.stateFile = options.stateFile;
    this.store = new Store(() => this.host);
    this.random = seededRandom(this.host.seed);
    if (this.stateFile) {
      const networks = this.stateFile.load();
      this.store.load(networks);
      this.logger.info({ state: this.stateFile.file, networks: networks.length }, 'loaded persistent networks');
    }
    this.runner = new CallRunner({
      store: this.store,
      host: this.host,
      logger: this.logger,
      faults: this.faults,
      log: this.log,
      raceMode: () => this.raceMode(),
      persist: () => this.persist(),
    });
  }

  /** The mode one delete-during-create resolves by (the ordering model's point 4). */
  private raceMode(): 'delete-wins' | 'create-wins' {
    return this.host.race === 'random' ? (this.random() < 0.5 ? 'delete-wins' : 'create-wins') : this.host.race;
  }

  // ---- accepting calls ---------------------------------------------------------------------------------------

  /** Accepts one op request; resolves with its response when the call completes (whether or not anyone waits). */
  submit(req: OpRequest, tcpPort?: number): Promise<OpResponse> {
    const seq = ++this.seq;
    const acceptedAt = Date.now();
    const pid = typeof req.pid === 'number' ? req.pid : 0;
    let plan: Plan;
    try {
      plan = planRequest(req);
    } catch (e) {
      return Promise.resolve(this.badRequest(req, e, { seq, pid, acceptedAt }));
    }
    this.log.count(plan.op);
    const refused = this.refusedOnArrival(plan, { seq, pid, acceptedAt }, staleHandle(req, this.boot));
    if (refused) return Promise.resolve(refused);
    return new Promise((resolve) => this.runner.start(req, plan, { seq, pid, acceptedAt, resolve, tcpPort }));
  }

  /** A request that does not plan (unknown op, bad arguments): recorded and answered with its HRESULT. */
  private badRequest(req: OpRequest, e: unknown, at: { seq: number; pid: number; acceptedAt: number }): OpResponse {
    const hr = e instanceof SimError ? e.hresult : HR.E_INVALIDARG;
    const op = typeof req.op === 'string' ? req.op : '?';
    this.log.count(op);
    this.log.record({
      seq: at.seq,
      op,
      api: op === 'HNSCall' ? 'v1' : 'v2',
      pid: at.pid,
      hr,
      acceptedAt: at.acceptedAt,
      finishedAt: Date.now(),
      fault: 'bad-request',
    });
    return { hr, result: null, errorRecord: errorRecord(hr) };
  }

  /** Refused on arrival: HNS is down (restarting), or the HCN API is absent on this "host". */
  private refusedOnArrival(
    plan: Plan,
    at: { seq: number; pid: number; acceptedAt: number },
    stale?: number,
  ): OpResponse | undefined {
    const refuse = stale ?? (plan.api !== 'v2' || this.host.v2 ? undefined : HR.E_NOTIMPL);
    const down = Date.now() < this.downUntil ? HR.RPC_S_CALL_FAILED_DNE : undefined;
    if (down === undefined && refuse === undefined) return undefined;
    const hr = (down ?? refuse)!;
    this.log.record({
      seq: at.seq,
      op: plan.op,
      api: plan.api,
      pid: at.pid,
      id: plan.id,
      hr,
      acceptedAt: at.acceptedAt,
      finishedAt: Date.now(),
      fault: down ? 'down' : stale ? 'stale-handle' : 'v2-disabled',
    });
    return { hr, result: null, errorRecord: errorRecord(hr) };
  }

  private persist(): void {
    if (!this.stateFile) return;
    try {
      this.stateFile.save(this.store.persistentNetworks());
    } catch (e) {
      this.logger.error({ err: (e as Error).message, state: this.stateFile.file }, 'could not write the state file');
    }
  }

  // ---- control -----------------------------------------------------------------------------------------------

  setLatency(op: SimOp, ms: number): void {
    this.host.latencyMs[op] = checkLatency(op, ms);
  }

  addFault(kind: 'fail' | 'hang' | 'kill', op: SimOp, options: FaultOptions & { hresult?: number; ms?: number }): void {
    if (typeof op !== 'string' || op.trim() === '') throw new Error('fault needs an operation name (or *)');
    const nth = options.nth ?? 1;
    const count = options.count ?? 1;
    if (!Number.isInteger(nth) || nth < 1) throw new Error('nth must be an integer >= 1');
    if (!Number.isInteger(count) || count < 1) throw new Error('count must be an integer >= 1');
    if (kind === 'fail' && (!Number.isInteger(options.hresult) || options.hresult! >>> 0 === 0)) {
      throw new Error('fail needs a failing HRESULT');
    }
    if (options.ms !== undefined && !(Number.isFinite(options.ms) && options.ms >= 0))
      throw new Error('ms must be >= 0');
    this.faults.add({
      kind,
      op,
      nth,
      count,
      hresult: options.hresult === undefined ? undefined : options.hresult >>> 0,
      ms: options.ms,
      ...(kind === 'fail' && options.afterCommit ? { afterCommit: true } : {}),
    });
  }

  /** Lets hung calls (of `op`, or all) continue, and spares calls already selected to hang that have not started. */
  release(op?: SimOp): number {
    return this.runner.release(op);
  }

  setRace(mode: RaceMode, seed?: number): void {
    if (!['delete-wins', 'create-wins', 'random'].includes(mode))
      throw new Error('race mode: delete-wins, create-wins or random');
    if (seed !== undefined && !Number.isInteger(seed)) throw new Error('seed must be an integer');
    this.host.race = mode;
    if (seed !== undefined) this.host.seed = seed;
    this.random = seededRandom(this.host.seed);
  }

  setDeleteNetworkWithEndpoints(mode: 'cascade' | 'refuse'): void {
    if (mode !== 'cascade' && mode !== 'refuse') throw new Error('delete-with-endpoints: cascade or refuse');
    this.host.deleteNetworkWithEndpoints = mode;
  }

  restart(downMs = 0, dropNamespaces?: boolean | readonly string[], rehydrate = false): { downUntil: number } {
    if (!(Number.isFinite(downMs) && downMs >= 0)) throw new Error('downMs must be >= 0');
    this.restarts++;
    this.boot++;
    this.downUntil = Date.now() + downMs;
    this.serviceCallbacks.serviceDisconnect();
    const failed = this.runner.abortInFlight('restart');
    this.store.restart({ ...(dropNamespaces === undefined ? {} : { dropNamespaces }), rehydrate });
    this.persist();
    this.logger.info({ downMs, failed }, 'HNS restart');
    return { downUntil: this.downUntil };
  }

  /**
   * HcnRegisterServiceCallback (service-callbacks.ts): refused as any call is while HNS is down or its HCN API absent;
   * else `deliver` gets the registration's notifications until the returned unregister runs.
   */
  registerServiceCallback(deliver: (n: ServiceNotification) => void): {
    response: OpResponse;
    unregister?: () => void;
  } {
    this.log.count('HcnRegisterServiceCallback');
    const hr = Date.now() < this.downUntil ? HR.RPC_S_CALL_FAILED_DNE : this.host.v2 ? 0 : HR.E_NOTIMPL;
    if (hr !== 0) return { response: { hr, result: null, errorRecord: errorRecord(hr) } };
    return { response: { hr: 0, result: null, errorRecord: null }, unregister: this.serviceCallbacks.add(deliver) };
  }

  setVersion(major: number, minor: number, v2?: boolean): void {
    if (!Number.isInteger(major) || !Number.isInteger(minor) || major < 0 || minor < 0)
      throw new Error('version must be MAJOR.MINOR');
    this.host.version = { major, minor };
    if (v2 !== undefined) this.host.v2 = v2;
  }

  addAdapter(adapter: SimAdapter): SimAdapter {
    const a = checkAdapter(adapter, this.host.adapters);
    this.host.adapters.push(a);
    return a;
  }

  /** Removes an adapter from the host; a network bound to it keeps its (now dangling) binding, as after a NIC removal. */
  removeAdapter(name: string): void {
    const i = this.host.adapters.findIndex((a) => a.Name.toLowerCase() === String(name).toLowerCase());
    if (i < 0) throw new Error(`no adapter named ${name}`);
    this.host.adapters.splice(i, 1);
  }

  stats(): SimStats {
    return {
      calls: this.log.counts(),
      busyMs: Math.round(this.runner.busyMs() * 1000) / 1000,
      pendingMutations: this.runner.pendingMutations(),
      hung: this.runner.hungOps(),
      counts: this.store.counts(),
      restarts: this.restarts,
    };
  }

  calls(): SimCallRecord[] {
    return this.log.calls();
  }

  dump(): SimDump {
    const s = this.store;
    return {
      host: structuredClone(this.host),
      networks: [...s.networks.values()].map((n) => ({
        ...networkV2(n),
        ID: n.id,
        Name: n.name,
        CreatedBy: n.createdBy,
        Persistent: isPersistent(n),
        ...(n.adapter ? { Adapter: n.adapter } : {}),
      })),
      endpoints: [...s.endpoints.values()].map((e) => ({
        ...endpointV2(e),
        ID: e.id,
        Name: e.name,
        CreatedBy: e.createdBy,
        SharedContainers: [...e.sharedContainers],
        State: e.state,
      })),
      namespaces: [...s.namespaces.values()].map((ns) => ({ ...namespaceV2(ns), ID: ns.id, CreatedBy: ns.createdBy })),
      boundAdapters: s.boundAdapters(),
      computeSystems: s.computeSystems.list().map((c) => ({ ID: c.id, Endpoints: c.endpoints })),
      stats: this.stats(),
    };
  }

  /**
   * Clears faults. With objects (default) also every object, the statistics and the call log; calls still in flight
   * then fail with RPC_S_CALL_FAILED_DNE, so nothing commits into the clean state. Without, hung calls are released
   * and complete normally. The host (adapters, version, latencies, modes) is kept.
   */
  reset(objects = true): void {
    this.faults.clear();
    if (!objects) this.runner.release();
    else {
      this.runner.abortInFlight('reset');
      this.store.clear();
      this.log.reset();
      this.runner.resetBusy();
      this.restarts = 0;
      this.boot++;
      this.downUntil = 0;
      this.persist();
    }
  }

  /** Resolves when no mutation is queued or executing and no call is hung. */
  waitIdle(timeoutMs = 10_000): Promise<void> {
    return this.runner.waitIdle(timeoutMs);
  }
}
