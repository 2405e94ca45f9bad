/**
 * The resident service behind the shim (`hcn-cni serve`): it runs the same plugin code as the standalone executable
 * (runCni), in this one process, for many attachments at once.
 *
 * - A request is accepted (HCNA) as soon as it is read and checked; from then on it is the service's: a shim that
 *   dies does not cancel it, the verb runs to its end and commits, so the runtime's DEL that follows finds a record.
 * - Requests for one attachment (CNI_CONTAINERID + CNI_IFNAME) run one after another in arrival order
 *   (KeyedQueue); other attachments, GC and STATUS run concurrently, as separate standalone processes would — the
 *   state store's locks and the audit's intents are what make that safe, exactly as between processes.
 * - What is kept between requests is only what is a property of the host (src/plugin/deps.ts: the addon, the HNS
 *   API choice, the OS helpers, the shared networks found by name, re-read once a create says one is gone), HCN
 *   handles (src/hns/held-handles.ts: dropped when HNS disconnects and at a hand-over), the latest configuration per
 *   state directory (for the background work) and open log files. Configuration is parsed
 *   per request; the state and HNS's endpoints are read fresh by every verb, so the audit never judges from a cache.
 * - The whole node's audit runs in the background (node-agent.ts), on an interval and right after HNS answers again
 *   following a failure; an ADD does only its own safety work (src/plugin/own-objects.ts), so its cost does not
 *   grow with the node.
 * - Intents carry this process's pid and start time: if the service dies mid-verb, its intents are dead intents and
 *   the audit treats them as it treats those of a killed standalone process.
 * - The peer check runs before a byte is read: on Linux (pauseOnConnect) the socket is 0600 in a 0700 directory and
 *   the peer's uid (SO_PEERCRED) must be the service's own; on Windows the addon's pipe server checks the client's
 *   token against allowSids before it hands the connection over at all (listeners.ts).
 * - An HCN call past its timeout holds only its own native thread, never one a later call needs; at a bound on
 *   such abandoned calls the service stops accepting and exits once its requests are done (abandoned-bound.ts).
 * - A new service started on the same address takes it over without a gap (hand-over.ts): this one stops
 *   accepting once the new one's socket is at the address, finishes what it accepted, and its caller exits 0.
 * - It counts what it does (verbs by result code, HCN calls and errors, audits, repairs: tally.ts) for its status, and, only
 *   when `metrics` is given, serves the same as Prometheus metrics over HTTP (prometheus.ts, loaded only then).
 */
import type { NetConf } from '../cni/types';
import { defaultClaimsDir } from '../cni/defaults';
import type { NativeHcn } from '../hns/native-types';
import { loadNative, type LoadOptions } from '../hns/native';
import { createLogger, type Logger } from '../log/logger';
import { pluginDeps, type PluginDeps } from '../plugin/deps';
import type { PodRepair } from '../plugin/verbs/repair';
import { DEFAULT_MAX_ABANDONED_CALLS } from './hand-over/abandoned-bound';
import { createNodeAgent, watchHnsForAgent } from './agent/agent-wiring';
import { ServiceEvents } from './observability/events';
import { HnsHealth } from './observability/hns-health';
import { RequestIntake, type IntakeOptions } from './transport/intake';
import { HandOverDesk } from './hand-over/hand-over';
import { startListening, type Listening } from './transport/start-listening';
import { createNetworkAtStart } from './agent/network-at-start-log';
import type { NodeAgent } from './agent/node-agent';
import { KeyedQueue } from './transport/queue';
import { startRepairTrigger } from './agent/repair-trigger';
import { RequestBook } from './transport/request-book';
import { RequestLogs } from './observability/request-log';
import { serviceMetrics } from './observability/metrics';
import { endings } from './hand-over/shutdown';
import { serviceStatus, type ServiceStatus } from './observability/status';
import { ServedConfigs } from './served-configs';

export type { InFlight } from './transport/request-book';
export type { ServiceStatus } from './observability/status';

export interface ServiceOptions {
  /** Unix socket path, or a Windows pipe name (\\.\pipe\…). */
  address: string;
  platform: NodeJS.Platform;
  /** This process (intents record it). */
  pid: number;
  /**
   * The Kubernetes pod the service runs in (the DaemonSet's HCN_CNI_POD_UID): in its status, so that the pod's
   * readiness probe tells whether the service answering at the address is its own or a newer pod's that took it over
   * (probes.ts).
   */
  pod?: string;
  /** The only uid allowed to connect (Linux): the service's own. Undefined: no uid check (Windows). */
  allowUid?: number;
  load?: LoadOptions;
  native?: NativeHcn;
  /** Where the audit's state lives by default (same as the standalone executable's). */
  defaults?: { stateDir?: string; logFile?: string };
  /**
   * The runtime's CNI configuration directory: hcn-cni's networks in it are served (audited, health-checked,
   * repaired, kept IPs released) from the start, before any verb of theirs arrives (conf-dir.ts).
   */
  confDir?: string;
  /** CNI_PATH for the delegated IPAM of those configurations (the runtime's CNI bin directories). */
  binDirs?: readonly string[];
  /** The service's own log (start, refusals, failures); request logs go back to their shim. */
  log?: Logger;
  /**
   * Windows: the SIDs a client's token must hold one of (enabled) to be served; default SERVICE_SIDS (SYSTEM,
   * BUILTIN\Administrators). Not reachable from the CLI or the environment: only tests change it, to show the
   * token check refuses a client the pipe's DACL lets in (wine has a single user, an administrator).
   */
  allowSids?: readonly string[];
  /** Socket file mode (Linux). Only tests change it, to show the peer check refuses what the mode would let in. */
  socketMode?: number;
  /** The node-wide register of live claims (src/state/claims.ts); default: the platform's (defaultClaimsDir). */
  claimsDir?: string;
  /**
   * How long a connection may take to send its whole request (the shim sends it in one go); one that has not
   * finished by then is closed unanswered (its shim, if it is one, runs the standalone executable). Default 10 s.
   */
  requestTimeoutMs?: number;
  /**
   * Connections whose request is not complete yet, at most; one more is closed at once (its shim falls back). Bounds
   * what clients that send slowly, or never, can hold: descriptors, and request bytes (≤ 2 MiB each). Default 64.
   */
  maxPendingConnections?: number;
  /** Abandoned HCN calls at which the service retires (abandoned-bound.ts); default DEFAULT_MAX_ABANDONED_CALLS. */
  maxAbandonedCalls?: number;
  /**
   * Serve Prometheus metrics at http://HOST:PORT/metrics (prometheus.ts); port 0 lets the system choose (the status and
   * the log say which). Off when undefined: then neither prom-client nor node:http is loaded. Which hosts are
   * acceptable (loopback unless the operator says otherwise) is the CLI's decision (src/cli/serve.ts).
   */
  metrics?: { host: string; port: number };
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
  /**
   * When another hcn-cni service serves the address, ask it to hand over (hand-over.ts) rather than refuse to
   * start. Default true (`hcn-cni serve --no-take-over`: false).
   */
  takeOver?: boolean;
  /** How long a hand-over offered stands before the service takes its lock back (hand-over.ts OFFER_DEADLINE_MS). */
  handOverDeadlineMs?: number;
}

export interface Service {
  readonly address: string;
  status(): ServiceStatus;
  /** Stops accepting and resolves when every accepted request has finished. */
  close(): Promise<void>;
  /**
   * Settles, with the reason, once the service retired by itself (the abandoned-call bound): it stopped accepting
   * and every accepted request has finished. The caller ends the process (EXIT_RETIRED).
   */
  readonly retired: Promise<string>;
  /**
   * Settles, with what happened, once a new service took the address over (hand-over.ts) and every request this one
   * accepted has finished. The caller ends the process (0).
   */
  readonly handedOver: Promise<string>;
  /** Repairs pods after an HNS restart now (configurations served with `repair: true`), and says what it did. */
  repair(): Promise<PodRepair[]>;
}

/**
 * The service composed of its parts, each made after what it uses: the counts (events.ts) before the runtime whose
 * observer feeds them, the repair trigger and the node agent, the book of requests, the metrics (before the socket:
 * an address that cannot be bound refuses the start), the status, the intake, the listening socket or pipe; then
 * the background work starts, and the service ends as shutdown.ts says, or hands over (hand-over.ts).
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const log = options.log ?? createLogger({ level: 'info' });
  // Loaded now, not on the first verb: the peer check needs it, and the first pod should not pay for it.
  const native = options.native ?? loadNative(options.load ?? {}).native;
  const events = new ServiceEvents();
  const deps = serviceDeps(options, native, events);
  const served = new ServedConfigs();
  const queue = new KeyedQueue();
  const repair = startRepairTrigger({ deps, served, queue, log, onRepair: (r) => events.repair(r.outcome) });
  const agent = createNodeAgent(options, { deps, served }, repair, log, watchHnsHealth(events));
  const book = new RequestBook();
  const logs = new RequestLogs({ pid: options.pid, service: true });
  const started = Date.now();
  const maxAbandoned = options.maxAbandonedCalls ?? DEFAULT_MAX_ABANDONED_CALLS;
  const takeOver = options.takeOver ?? true;
  const metricsParts = { ...options, stores: deps.stores, book, agent, log };
  const metrics = await serviceMetrics(metricsParts, events, takeOver ? options.address : undefined);
  const status = (): ServiceStatus =>
    serviceStatus({
      ...options,
      started,
      maxAbandoned,
      book,
      logs,
      tally: events.tally,
      agent,
      metricsUrl: metrics.url,
    });
  // Made once the socket is bound (it needs the listener); a hand-over asked before that is refused.
  const late: { desk?: HandOverDesk } = {};
  const requestParts = { native, log, deps, served, queue, logs, book, counts: events, status };
  const listening = await startAccepting(options, requestParts, late, takeOver).catch(async (e: unknown) => {
    await metrics.close();
    throw e;
  });
  metrics.listening();
  const hnsWatch = startBackgroundWork(options, native, deps, agent, log);
  const stopListening = listening.close;
  const closeMetrics = metrics.close;
  const ending = endings({ ...options, maxAbandoned, log, stopListening, hnsWatch, agent, repair, book, closeMetrics });
  late.desk = new HandOverDesk({
    address: options.address,
    port: listening.handOver,
    log,
    ...(options.handOverDeadlineMs !== undefined ? { offerDeadlineMs: options.handOverDeadlineMs } : {}),
    // The new service opens its own HCN handles: this one closes what it kept (src/hns/held-handles.ts).
    onTaken: (newPid) => (deps.hns.heldHandles?.dropAll(native), ending.handOver(newPid)),
    onLost: ending.retire,
  });
  return {
    address: options.address,
    status,
    repair: () => repair.run(),
    close: ending.close,
    retired: ending.retired,
    handedOver: ending.handedOver,
  };
}

/**
 * Accepting: the intake (each request read, checked and queued per attachment, hand-over requests passed to the
 * desk) behind the listening socket or pipe, which is bound last: once a connection can arrive, everything that
 * serves it exists — but the hand-over desk, which needs the listener (`late.desk`, set by the caller).
 */
function startAccepting(
  options: ServiceOptions,
  parts: Pick<IntakeOptions, 'native' | 'log' | 'deps' | 'served' | 'queue' | 'logs' | 'book' | 'counts' | 'status'>,
  late: { desk?: HandOverDesk },
  takeOver: boolean,
): Promise<Listening> {
  const intake = new RequestIntake({
    ...options,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    maxPending: options.maxPendingConnections ?? 64,
    ...parts,
    onHandOver: (socket, env) => (late.desk ? late.desk.request(socket, env) : socket.destroy()),
  });
  const { address, allowSids, socketMode, pid } = options;
  return startListening({
    ...{ address, native: parts.native, log: parts.log, allowSids, socketMode, takeOver, pid },
    onConnection: intake.onConnection,
    onRefused: () => parts.book.counts.refused++,
  });
}

/**
 * The plugin's dependencies as the service keeps them: this process's pid in its intents, the whole node's audit left
 * to the node agent (an ADD does only its own safety work), HCN handles and the address book kept between verbs, and
 * every HCN call and audit reported to the service's events.
 */
function serviceDeps(options: ServiceOptions, native: NativeHcn, events: ServiceEvents): PluginDeps {
  const claimsDir = options.claimsDir ?? defaultClaimsDir(options.platform);
  return pluginDeps({
    pid: options.pid,
    native,
    ...(claimsDir ? { claimsDir } : {}),
    backgroundAudit: true,
    fewestCalls: true,
    observer: events.observer,
  });
}

/** The service's one HNS-health tracker, told of every HCN call before the counts are (events.ts). */
function watchHnsHealth(events: ServiceEvents): HnsHealth {
  const health = new HnsHealth();
  events.onHcnCall((c) => health.observe(c.hresult));
  events.countHcnCalls();
  return health;
}

/**
 * What runs beside the requests once the service listens: the node agent, HNS's own word that it restarted (returned:
 * the ending stops watching), and the bridge network asked for at the start (`--create-network`).
 */
function startBackgroundWork(
  options: ServiceOptions,
  native: NativeHcn,
  deps: PluginDeps,
  agent: NodeAgent,
  log: Logger,
): { close(): Promise<void> } | undefined {
  agent.start();
  const hnsWatch = watchHnsForAgent(options, native, agent, log, deps.hns.heldHandles);
  if (options.createNetwork) createNetworkAtStart(options.createNetwork, deps, log);
  return hnsWatch;
}
