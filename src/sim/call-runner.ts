/**
 * How calls run once accepted (the ordering model at the top of engine.ts, points 2 to 5): a read at once after its
 * latency, against committed state; a mutation on the single executor in acceptance order, unless it is a delete
 * racing an in-flight create under create-wins; faults (fail, hang, kill-client) as matched on arrival. Also what the
 * engine's control needs of calls in flight: release hung ones, fail all of them at a restart or reset, wait for idle.
 */
import { performance } from 'node:perf_hooks';
import { HR, hresultOf } from '../hns/hresults';
import type { CallLog } from './call-log';
import type { SimHost, SimOp } from './control-types';
import { normalizeOp, type FaultBook, type FaultHits } from './faults';
import { guidKey, recaseGuids } from './guid';
import type { Logger } from '../log/logger';
import { errorEnvelope } from './op-table-v1';
import { tcpPeerPid } from './peer-pid';
import type { Plan } from './plan';
import { SimError, errorRecord, hcsResult } from './sim-error';
import type { Store } from './store';
import type { OpRequest, OpResponse } from './wire-types';

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
  /** failWith is answered after the call took effect (FaultOptions.afterCommit). */
  failAfterCommit?: boolean;
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

/** What the runner needs of the engine. */
export interface RunnerDeps {
  store: Store;
  host: SimHost;
  logger: Logger;
  faults: FaultBook;
  log: CallLog;
  /** The mode one delete-during-create resolves by: the host's, or a seeded coin when it is `random`. */
  raceMode(): 'delete-wins' | 'create-wins';
  /** Saves the persistent networks after a mutation (the state file). */
  persist(): void;
}

export class CallRunner {
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
  private idleWaiters: Array<() => void> = [];
  private readonly store: Store;
  private readonly host: SimHost;
  private readonly logger: Logger;
  private readonly faults: FaultBook;
  private readonly log: CallLog;

  constructor(private readonly deps: RunnerDeps) {
    this.store = deps.store;
    this.host = deps.host;
    this.logger = deps.logger;
    this.faults = deps.faults;
    this.log = deps.log;
  }

  /** Mutations queued or executing. */
  pendingMutations(): number {
    return this.queue.length + (this.executing ? 1 : 0);
  }

  /** The operations of the calls hung right now, in the order they hung. */
  hungOps(): SimOp[] {
    return [...this.hung].map((c) => c.plan.op);
  }

  /** The union of all calls' execution intervals so far (ms), and its reset. */
  busyMs(): number {
    return this.busy.value();
  }
  resetBusy(): void {
    this.busy.reset();
  }

  /** The call in flight, with its faults and latency: a read runs at once, a mutation is ordered (acceptMutation). */
  start(
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
      ...(hits.failAfterCommit ? { failAfterCommit: true } : {}),
      hang: hits.hang,
      settled: false,
      abort: new AbortController(),
      resolve: c.resolve,
    };
    if (hits.fail !== undefined) mark(call, 'failed');
    this.inFlight.add(call);
    if (plan.creates) this.adjustPending(plan.creates, +1);

    if (plan.kind === 'read') void this.runOne(call);
    else this.acceptMutation(call);

    if (hits.kill) this.killClient(call);
  }

  private acceptMutation(call: Call): void {
    const d = call.plan.deletes;
    if (d && !this.store.has(d.kind, d.id) && this.pendingCreates.has(`${d.kind}:${guidKey(d.id)}`)) {
      const mode = this.deps.raceMode();
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

  /** One call: its stall (hang), its latency, then its effect, unless it was settled meanwhile (aborted, killed). */
  private async runOne(call: Call): Promise<void> {
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
        try {
          await this.runOne(call);
        } finally {
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
    const failed = (hr: number): OpResponse =>
      plan.envelope
        ? { hr: 0, result: errorEnvelope(hr, this.host), errorRecord: null }
        : { hr, result: null, errorRecord: recordOf(plan, hr) };
    if (call.failWith !== undefined && !call.failAfterCommit) return failed(call.failWith);
    try {
      const run = plan.run({ store: this.store, host: this.host });
      if (plan.kind === 'mutation') this.deps.persist();
      if (call.failWith !== undefined) return failed(call.failWith);
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
    this.log.record({
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

  isIdle(): boolean {
    return this.queue.length === 0 && !this.executing && this.hung.size === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
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

  /** Fails every accepted, unfinished call with RPC_S_CALL_FAILED_DNE, without effect. */
  abortInFlight(fault: string): number {
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
            `not idle after ${timeoutMs} ms: ${this.pendingMutations()} mutations pending, ${this.hung.size} hung`,
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
