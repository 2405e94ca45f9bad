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
import { performance } from 'node:perf_hooks';
import { HR, hresultOf } from '../hns/hresults';
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
import { FaultBook, normalizeOp, type FaultHits } from './faults';
import { guidKey, recaseGuids } from './guid';
import { checkAdapter, checkLatency } from './host';
import { silentLogger, type Logger } from '../log/logger';
import { isPersistent } from './model';
import { tcpPeerPid } from './peer-pid';
import { planRequest } from './op-table';
import { errorEnvelope } from './op-table-v1';
import type { StateFile } from './persistence';
import type { Plan } from './plan';
import { seededRandom } from './rng';
import { ServiceCallbacks, type ServiceNotification } from './service-callbacks';
import { SimError, errorRecord, hcsResult } from './sim-error';
import { Store } from './store';
import { endpointV2, namespaceV2, networkV2 } from './views';
import type { OpRequest, OpResponse } from './wire-types';

const CALL_LOG_LIMIT = 10_000;
const E_UNEXPECTED = hresultOf('E_UNEXPECTED');

interface Call {
  seq: number;
  plan: Plan;
  pid: number;
  /** The caller's Windows pid (non-zero only for the wine build of the client library). */
  winpid: number;
  /** The caller's TCP port, when it came over TCP. */
  tcpPort?: number;
  acceptedAt: number;
  latencyMs: number;
  fault?: string;
  failWith?: number;
  hang?: { ms?: number };
  /** Set while the call is stalled by a hang fault. */
  release?: () => void;
  settled: boolean;
  /** Fires on restart: ends the call's waits early. */
  abort: AbortController;
  resolve: (r: OpResponse) => void;
}

/**
 * Sleeps `ms`, or less when the signal fires. 0 ms still yields, so reads never run inside submit(); it yields
 * with setImmediate, not setTimeout(0), which Node clamps to 1 ms (that floor made every "zero-latency" call take
 * over a millisecond: 3 ms for an open + query pair, see bench/native-calls.bench.js).
 */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    if (ms <= 0) {
      setImmediate(resolve);
      return;
    }
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Length of the union of execution intervals. */
class BusyMeter {
  private active = 0;
  private since = 0;
  private total = 0;

  enter(): void {
    if (this.active++ === 0) this.since = performance.now();
  }

  leave(): void {
    if (--this.active === 0) this.total += performance.now() - this.since;
  }

  value(): number {
    return this.total + (this.active > 0 ? performance.now() - this.since : 0);
  }

  reset(): void {
    this.total = 0;
    if (this.active > 0) this.since = performance.now();
  }
}

export interface EngineOptions {
  host: SimHost;
  stateFile?: StateFile;
  logger?: Logger;
}

export class Engine {
  readonly store: Store;
  readonly host: SimHost;
  private readonly logger: Logger;
  private readonly stateFile?: StateFile;
  private readonly faults = new FaultBook();
  private readonly busy = new BusyMeter();
  private readonly inFlight = new Set<Call>();
  private readonly hung = new Set<Call>();
  /** `${kind}:${id}` → number of accepted, unfinished creates of that object. */
  private readonly pendingCreates = new Map<string, number>();
  private queue: Call[] = [];
  private executing?: Call;
  /** Answers given, for the idCase `mixed` mode that flips letter case on every answer. */
  private answers = 0;
  private pumping = false;
  private seq = 0;
  private downUntil = 0;
  private restarts = 0;
  private readonly serviceCallbacks = new ServiceCallbacks();
  private callCounts: Record<SimOp, number> = {};
  private callLog: SimCallRecord[] = [];
  private random: () => number;
  private idleWaiters: Array<() => void> = [];

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
    this.count(plan.op);
    const refused = this.refusedOnArrival(plan, { seq, pid, acceptedAt });
    if (refused) return Promise.resolve(refused);
    return new Promise((resolve) => this.start(req, plan, { seq, pid, acceptedAt, resolve, tcpPort }));
  }

  /** A request that does not plan (unknown op, bad arguments): recorded and answered with its HRESULT. */
  private badRequest(req: OpRequest, e: unknown, at: { seq: number; pid: number; acceptedAt: number }): OpResponse {
    const hr = e instanceof SimError ? e.hresult : HR.E_INVALIDARG;
    const op = typeof req.op === 'string' ? req.op : '?';
    this.count(op);
    this.record({
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
  private refusedOnArrival(plan: Plan, at: { seq: number; pid: number; acceptedAt: number }): OpResponse | undefined {
    const refuse = plan.api !== 'v2' || this.host.v2 ? undefined : HR.E_NOTIMPL;
    const down = Date.now() < this.downUntil ? HR.RPC_S_CALL_FAILED_DNE : undefined;
    if (down === undefined && refuse === undefined) return undefined;
    const hr = (down ?? refuse)!;
    this.record({
      seq: at.seq,
      op: plan.op,
      api: plan.api,
      pid: at.pid,
      id: plan.id,
      hr,
      acceptedAt: at.acceptedAt,
      finishedAt: Date.now(),
      fault: down ? 'down' : 'v2-disabled',
    });
    return { hr, result: null, errorRecord: errorRecord(hr) };
  }

  /** The call in flight, with its faults and latency: a read runs at once, a mutation is ordered (acceptMutation). */
  private start(
    req: OpRequest,
    plan: Plan,
    c: { seq: number; pid: number; acceptedAt: number; resolve: Call['resolve']; tcpPort: number | undefined },
  ): void {
    const hits: FaultHits = this.faults.match(plan.op);
    const call: Call = {
      seq: c.seq,
      plan,
      pid: c.pid,
      winpid: typeof req.winpid === 'number' ? req.winpid : 0,
      ...(c.tcpPort !== undefined ? { tcpPort: c.tcpPort } : {}),
      acceptedAt: c.acceptedAt,
      latencyMs: this.latencyOf(plan.op),
      failWith: hits.fail,
      hang: hits.hang,
      settled: false,
      abort: new AbortController(),
      resolve: c.resolve,
    };
    if (hits.fail !== undefined) mark(call, 'failed');
    this.inFlight.add(call);
    if (plan.creates) this.adjustPending(plan.creates, +1);

    if (plan.kind === 'read') void this.runRead(call);
    else this.acceptMutation(call);

    if (hits.kill) this.killClient(call);
  }

  private acceptMutation(call: Call): void {
    const d = call.plan.deletes;
    if (d && !this.store.has(d.kind, d.id) && this.pendingCreates.has(`${d.kind}:${guidKey(d.id)}`)) {
      const mode = this.host.race === 'random' ? (this.random() < 0.5 ? 'delete-wins' : 'create-wins') : this.host.race;
      mark(call, `race-${mode}`);
      this.logger.info({ seq: call.seq, op: call.plan.op, id: d.id, mode }, 'delete races an in-flight create');
      if (mode === 'create-wins') {
        void this.runDetached(call);
        return;
      }
    }
    this.queue.push(call);
    void this.pump();
  }

  /** kill-client: the call is already accepted (queued); now its caller dies, as a CNI ADD killed by the runtime. */
  private killClient(call: Call): void {
    // A wine client cannot know its Unix pid (see peer-pid.ts): ask the connection, and never trust the pid it sent
    // (it is the wineserver's: killing it would take every wine process down).
    const pid = call.winpid ? ((call.tcpPort !== undefined ? tcpPeerPid(call.tcpPort) : undefined) ?? -1) : call.pid;
    // Never ourselves, init, a process group (pid <= 0) or our parent (the test runner that started us).
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || pid === process.ppid) {
      mark(call, 'kill-refused');
      this.logger.warn({ seq: call.seq, pid }, 'kill-client refused for this pid');
      return;
    }
    try {
      process.kill(pid, 'SIGKILL');
      mark(call, 'killed-client');
      this.logger.info({ seq: call.seq, op: call.plan.op, pid }, 'killed client');
    } catch (e) {
      mark(call, 'kill-failed');
      this.logger.warn({ seq: call.seq, pid, err: (e as Error).message }, 'kill-client failed');
    }
  }

  // ---- executing calls ---------------------------------------------------------------------------------------

  private async runRead(call: Call): Promise<void> {
    this.busy.enter();
    try {
      await this.stall(call);
      await sleep(call.latencyMs, call.abort.signal);
      if (!call.settled) this.finish(call, this.execute(call));
    } finally {
      this.busy.leave();
    }
  }

  /** The single mutation executor: one call at a time, in acceptance order. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const call = this.queue.shift()!;
        this.executing = call;
        this.busy.enter();
        try {
          await this.stall(call);
          await sleep(call.latencyMs, call.abort.signal);
          if (!call.settled) this.finish(call, this.execute(call));
        } finally {
          this.busy.leave();
          this.executing = undefined;
        }
      }
    } finally {
      this.pumping = false;
      this.checkIdle();
    }
  }

  /** create-wins: the delete is answered from committed state as it stands now, then takes its latency. */
  private async runDetached(call: Call): Promise<void> {
    const response = this.execute(call);
    this.busy.enter();
    try {
      await this.stall(call);
      await sleep(call.latencyMs, call.abort.signal);
      if (!call.settled) this.finish(call, response);
    } finally {
      this.busy.leave();
    }
  }

  private async stall(call: Call): Promise<void> {
    if (!call.hang) return;
    mark(call, 'hung');
    const ms = call.hang.ms;
    this.logger.info({ seq: call.seq, op: call.plan.op, ms }, 'call hangs');
    await new Promise<void>((resolve) => {
      const t = ms !== undefined ? setTimeout(done, ms) : undefined;
      const signal = call.abort.signal;
      function done() {
        if (t) clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      call.release = done;
      this.hung.add(call);
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
    });
    call.release = undefined;
    this.hung.delete(call);
  }

  /** The call's effect against committed state, now. Never throws. */
  private execute(call: Call): OpResponse {
    const { plan } = call;
    if (call.failWith !== undefined) {
      const hr = call.failWith;
      return plan.envelope
        ? { hr: 0, result: errorEnvelope(hr, this.host), errorRecord: null }
        : { hr, result: null, errorRecord: recordOf(plan, hr) };
    }
    try {
      const run = plan.run({ store: this.store, host: this.host });
      if (plan.kind === 'mutation') this.persist();
      const result = run === null ? null : recaseGuids(run, this.host.idCase, this.answers++ % 2);
      return { hr: 0, result, errorRecord: null };
    } catch (e) {
      if (e instanceof SimError) {
        this.logger.debug({ seq: call.seq, op: plan.op, hr: e.hresult, detail: e.detail }, 'call failed');
        return { hr: e.hresult, result: null, errorRecord: recordOf(plan, e.hresult) };
      }
      this.logger.error({ seq: call.seq, op: plan.op, err: (e as Error).stack }, 'simulator bug');
      return { hr: E_UNEXPECTED, result: null, errorRecord: recordOf(plan, E_UNEXPECTED) };
    }
  }

  private finish(call: Call, response: OpResponse): void {
    if (call.settled) return;
    call.settled = true;
    this.inFlight.delete(call);
    if (call.plan.creates) this.adjustPending(call.plan.creates, -1);
    const hr = call.plan.envelope && response.hr === 0 ? envelopeCode(response.result) : response.hr;
    this.record({
      seq: call.seq,
      op: call.plan.op,
      api: call.plan.api,
      pid: call.pid,
      id: call.plan.id,
      hr,
      acceptedAt: call.acceptedAt,
      finishedAt: Date.now(),
      fault: call.fault,
    });
    this.logger.debug({ seq: call.seq, op: call.plan.op, id: call.plan.id, hr, fault: call.fault }, 'call done');
    call.resolve(response);
    this.checkIdle();
  }

  private adjustPending(target: { kind: string; id: string }, delta: number): void {
    const key = `${target.kind}:${guidKey(target.id)}`;
    const n = (this.pendingCreates.get(key) ?? 0) + delta;
    if (n > 0) this.pendingCreates.set(key, n);
    else this.pendingCreates.delete(key);
  }

  private latencyOf(op: SimOp): number {
    const want = normalizeOp(op);
    const key = Object.keys(this.host.latencyMs).find((k) => k !== '*' && normalizeOp(k) === want);
    return key !== undefined ? this.host.latencyMs[key] : (this.host.latencyMs['*'] ?? 0);
  }

  private count(op: SimOp): void {
    this.callCounts[op] = (this.callCounts[op] ?? 0) + 1;
  }

  private record(r: SimCallRecord): void {
    if (r.fault === undefined) delete r.fault;
    if (r.id === undefined) delete r.id;
    this.callLog.push(r);
    if (this.callLog.length > CALL_LOG_LIMIT) this.callLog.splice(0, this.callLog.length - CALL_LOG_LIMIT);
  }

  private persist(): void {
    if (!this.stateFile) return;
    try {
      this.stateFile.save(this.store.persistentNetworks());
    } catch (e) {
      this.logger.error({ err: (e as Error).message, state: this.stateFile.file }, 'could not write the state file');
    }
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && !this.executing && this.hung.size === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
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
    });
  }

  /** Lets hung calls (of `op`, or all) continue, and spares calls already selected to hang that have not started. */
  release(op?: SimOp): number {
    let n = 0;
    for (const call of this.inFlight) {
      if (op !== undefined && op !== '*' && normalizeOp(op) !== normalizeOp(call.plan.op)) continue;
      if (call.release) {
        call.release();
        n++;
      } else if (call.hang) {
        call.hang = undefined;
        n++;
      }
    }
    return n;
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

  restart(downMs = 0, dropNamespaces?: boolean | readonly string[]): { downUntil: number } {
    if (!(Number.isFinite(downMs) && downMs >= 0)) throw new Error('downMs must be >= 0');
    this.restarts++;
    this.downUntil = Date.now() + downMs;
    this.serviceCallbacks.serviceDisconnect();
    const failed = this.abortInFlight('restart');
    this.store.restart(dropNamespaces === undefined ? {} : { dropNamespaces });
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
    this.count('HcnRegisterServiceCallback');
    const hr = Date.now() < this.downUntil ? HR.RPC_S_CALL_FAILED_DNE : this.host.v2 ? 0 : HR.E_NOTIMPL;
    if (hr !== 0) return { response: { hr, result: null, errorRecord: errorRecord(hr) } };
    return { response: { hr: 0, result: null, errorRecord: null }, unregister: this.serviceCallbacks.add(deliver) };
  }

  /** Fails every accepted, unfinished call with RPC_S_CALL_FAILED_DNE, without effect. */
  private abortInFlight(fault: string): number {
    const failed = { hr: HR.RPC_S_CALL_FAILED_DNE, result: null, errorRecord: errorRecord(HR.RPC_S_CALL_FAILED_DNE) };
    const victims = [...this.inFlight];
    this.queue = [];
    for (const call of victims) {
      mark(call, fault);
      this.finish(call, failed);
      call.abort.abort();
    }
    this.pendingCreates.clear();
    this.checkIdle();
    return victims.length;
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
      calls: { ...this.callCounts },
      busyMs: Math.round(this.busy.value() * 1000) / 1000,
      pendingMutations: this.queue.length + (this.executing ? 1 : 0),
      counts: this.store.counts(),
      restarts: this.restarts,
    };
  }

  calls(): SimCallRecord[] {
    return this.callLog.map((r) => ({ ...r }));
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
    if (!objects) this.release();
    else {
      this.abortInFlight('reset');
      this.store.clear();
      this.callCounts = {};
      this.callLog = [];
      this.busy.reset();
      this.restarts = 0;
      this.downUntil = 0;
      this.persist();
    }
  }

  /** Resolves when no mutation is queued or executing and no call is hung. */
  waitIdle(timeoutMs = 10_000): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `not idle after ${timeoutMs} ms: ${this.stats().pendingMutations} mutations pending, ${this.hung.size} hung`,
          ),
        );
      }, timeoutMs);
      this.idleWaiters.push(waiter);
    });
  }
}

/** HCS answers with its result document, HNS with its error record. */
function recordOf(plan: Plan, hr: number): string {
  return plan.api === 'hcs' ? hcsResult(hr) : errorRecord(hr);
}

/** Notes a disturbance on the call's log record ("failed,hung"). */
function mark(call: Call, fault: string): void {
  call.fault = call.fault ? `${call.fault},${fault}` : fault;
}

/** The ErrorCode inside an HNSCall envelope, for the call log (the call itself answered S_OK). */
function envelopeCode(result: string | null): number {
  try {
    const env = JSON.parse(result ?? '{}') as { Success?: boolean; ErrorCode?: number };
    return env.Success === false ? (env.ErrorCode ?? HR.E_FAIL) >>> 0 : 0;
  } catch {
    return 0;
  }
}
