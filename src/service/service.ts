/**
 * The resident service behind the shim (`hcn-cni serve`): it runs the same plugin code as the standalone executable
 * (runCni), in this one process, for many attachments at once.
 *
 * - A request is accepted (HCNA) as soon as it is read and checked; from then on it is the service's: a shim that
 *   dies does not cancel it, the verb runs to its end and commits, so the runtime's DEL that follows finds a record.
 * - Requests for one attachment (CNI_CONTAINERID + CNI_IFNAME) run one after another in arrival order
 *   (KeyedQueue); other attachments, GC and STATUS run concurrently, as separate standalone processes would — the
 *   state store's locks and the audit's intents are what make that safe, exactly as between processes.
 * - What is kept between requests is only what is a property of the host (src/plugin/runtime.ts: the addon, the HNS
 *   API choice, the OS helpers, the shared networks found by name, re-read once a create says one is gone), the
 *   latest configuration per state directory (for the background work) and open log files. Configuration is parsed
 *   per request; the state and HNS's endpoints are read fresh by every verb, so the audit never judges from a cache.
 * - The whole node's audit runs in the background (node-agent.ts), on an interval and right after HNS answers again
 *   following a failure; an ADD does only its own safety work (src/plugin/own-objects.ts), so its cost does not
 *   grow with the node.
 * - Intents carry this process's pid and start time: if the service dies mid-verb, its intents are dead intents and
 *   the audit treats them as it treats those of a killed standalone process.
 * - The peer check runs before a byte is read: on Linux (pauseOnConnect) the socket is 0600 in a 0700 directory and
 *   the peer's uid (SO_PEERCRED) must be the service's own; on Windows the addon's pipe server checks the client's
 *   token against allowSids before it hands the connection over at all (listen.ts).
 * - An HCN call past its timeout holds only its own native thread, never one a later call needs; at a bound on
 *   such abandoned calls the service stops accepting and exits once its requests are done (abandoned-bound.ts).
 * - It counts what it does (verbs by result code, HCN calls and errors, audits, repairs: tally.ts) for its status, and, only
 *   when `metrics` is given, serves the same as Prometheus metrics over HTTP (metrics.ts, loaded only then).
 */
import { prepareNetwork } from '../plugin/network-at-start';
import type { NetConf } from '../cni/types';
import { defaultClaimsDir, defaultStateDir } from '../cni/defaults';
import * as net from 'net';
import { CniCode } from '../cni/cni-error';
import { isPlainObject } from '../cni/fields';
import type { NativeHcn } from '../hns/native-types';
import { loadNative, type LoadOptions } from '../hns/native';
import { Hcn } from '../hns/hcn';
import { watchHnsService } from '../hns/service-notifications';
import { createLogger, type Logger } from '../log/logger';
import { PluginRuntime } from '../plugin/runtime';
import { runCni } from '../run';
import { countRecordFiles } from '../state/store';
import { abandonedCount } from '../hns/abandoned-calls';
import { abandonedStatus, DEFAULT_MAX_ABANDONED_CALLS, watchBound, type AbandonedStatus } from './abandoned-bound';
import { isPipe, listenExclusive, listenPipe, SERVICE_SIDS } from './listen';
import {
  encodeAccept,
  encodeResult,
  encodeVersionRefusal,
  KIND_CNI,
  KIND_STATUS,
  PROTOCOL_VERSION,
  ProtocolError,
  RequestReader,
  type Request,
} from './protocol';
import { watchConfDir } from './conf-dir';
import { NodeAgent, type NodeAgentStatus } from './node-agent';
import { KeyedQueue } from './queue';
import { startRepairTrigger } from './repair-trigger';
import type { PodRepair } from '../plugin/repair';
import { RequestLogs } from './request-log';
import type { MetricsServer } from './metrics';
import { callEvent, codeLabel, Tally, verbLabel, type MetricsSink, type TallySnapshot } from './tally';

export interface ServiceOptions {
  /** Unix socket path, or a Windows pipe name (\\.\pipe\…). */
  address: string;
  platform: NodeJS.Platform;
  /** This process (intents record it). */
  pid: number;
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
   * Serve Prometheus metrics at http://HOST:PORT/metrics (metrics.ts); port 0 lets the system choose (the status and
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
}

export interface InFlight {
  id: number;
  verb: string;
  containerId?: string;
  ifname?: string;
  state: 'queued' | 'running';
  /** ms since the service accepted it. */
  ageMs: number;
  /** false once the shim that sent it has gone (killed, timed out): the verb still finishes. */
  shimConnected: boolean;
}

export interface ServiceStatus {
  pid: number;
  protocol: number;
  address: string;
  startedAt: string;
  uptimeMs: number;
  served: number;
  refused: number;
  failed: number;
  /** Queued requests not run because their shim was gone before they started (nothing was done for them). */
  notRun: number;
  /** Connections closed before their request was complete: too slow (requestTimeoutMs) or too many pending. */
  timedOut: number;
  tooMany: number;
  /** Connections whose request is not complete yet. */
  pendingConnections: number;
  /** Request log files open (bounded; see log-files.ts). */
  logFilesOpen: number;
  inFlight: InFlight[];
  /** HCN calls past their timeout and still running, and the bound at which the service retires. */
  abandoned: AbandonedStatus;
  /** What the service counted (the same counts its metrics carry). */
  tally: TallySnapshot;
  /** The node agent's background audits (node-agent.ts). */
  agent: NodeAgentStatus;
  /** Where its Prometheus metrics are served; absent when they are off. */
  metricsUrl?: string;
}

interface Entry {
  id: number;
  verb: string;
  containerId?: string;
  ifname?: string;
  state: 'queued' | 'running';
  since: number;
  shimConnected: boolean;
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
  /** Repairs pods after an HNS restart now (configurations served with `repair: true`), and says what it did. */
  repair(): Promise<PodRepair[]>;
}

/** What the shim prints if this service ends after accepting and before answering: "try again later". */
function ifServiceDies(req: Request): string {
  let cniVersion = '1.1.0';
  try {
    const raw: unknown = JSON.parse(req.stdin.toString('utf8').replace(/^\uFEFF/, ''));
    if (isPlainObject(raw) && typeof raw.cniVersion === 'string') cniVersion = raw.cniVersion;
  } catch {
    // not JSON: the plugin would have said so; the default version is fine for a transport failure
  }
  const verb = req.env.CNI_COMMAND ?? 'the request';
  return `${JSON.stringify({ cniVersion, code: CniCode.TRY_AGAIN_LATER, msg: `the hcn-cni service ended before it finished ${verb}; try again` })}\n`;
}

export async function startService(options: ServiceOptions): Promise<Service> {
  const log = options.log ?? createLogger({ level: 'info' });
  // Loaded now, not on the first verb: the peer check needs it, and the first pod should not pay for it.
  const native = options.native ?? loadNative(options.load ?? {}).native;
  const claimsDir = options.claimsDir ?? defaultClaimsDir(options.platform);
  const tally = new Tally();
  const sinks: MetricsSink[] = [tally];
  const runtime = new PluginRuntime({
    pid: options.pid,
    native,
    ...(claimsDir ? { claimsDir } : {}),
    backgroundAudit: true,
    fewestCalls: true,
    observer: {
      hcnCall: (c) => {
        repair.hcnCall(c);
        const e = callEvent(c);
        for (const sink of sinks) sink.hcnCall(e.op, e.seconds, e.hresult);
        agent.hcnCall(c.hresult);
      },
      audit: (o) => {
        for (const sink of sinks) sink.audit(o);
      },
    },
  });
  // Told of HNS failing by the runtime's observer above (which only runs once a verb or the agent calls HNS).
  const agent = new NodeAgent({
    runtime,
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
    repair: async ({ conf }, verdicts) => {
      await repair.runFor(conf, verdicts);
    },
    ...(options.agent?.probeMs !== undefined ? { probeMs: options.agent.probeMs } : {}),
    ...(options.agent?.tickMs !== undefined ? { tickMs: options.agent.tickMs } : {}),
  });
  const logs = new RequestLogs({ pid: options.pid, service: true });
  const queue = new KeyedQueue();
  const repair = startRepairTrigger({
    runtime,
    queue,
    log,
    onRepair: (r) => {
      for (const sink of sinks) sink.repair(r.outcome);
    },
  });
  const entries = new Map<number, Entry>();
  const running = new Set<Promise<void>>();
  const started = Date.now();
  let nextId = 1;
  const counts = { served: 0, refused: 0, failed: 0, notRun: 0, timedOut: 0, tooMany: 0 };
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const maxPending = options.maxPendingConnections ?? 64;
  let pendingConnections = 0;
  let lastBusyWarning = 0;
  const maxAbandoned = options.maxAbandonedCalls ?? DEFAULT_MAX_ABANDONED_CALLS;

  const status = (): ServiceStatus => ({
    pid: options.pid,
    protocol: PROTOCOL_VERSION,
    address: options.address,
    startedAt: new Date(started).toISOString(),
    uptimeMs: Date.now() - started,
    ...counts,
    pendingConnections,
    logFilesOpen: logs.files.openCount,
    inFlight: [...entries.values()].map((e) => ({
      id: e.id,
      verb: e.verb,
      ...(e.containerId !== undefined ? { containerId: e.containerId } : {}),
      ...(e.ifname !== undefined ? { ifname: e.ifname } : {}),
      state: e.state,
      ageMs: Date.now() - e.since,
      shimConnected: e.shimConnected,
    })),
    abandoned: abandonedStatus(maxAbandoned),
    tally: tally.snapshot(),
    agent: agent.status(),
    ...(metrics ? { metricsUrl: metrics.url } : {}),
  });

  /** The peer check: true if this connection may talk to us. Runs before anything is read from it. */
  const peerAllowed = (socket: net.Socket): boolean => {
    if (options.allowUid === undefined) return true;
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return false;
    try {
      return native.peerCredentials(fd).uid === options.allowUid;
    } catch (e) {
      log.error({ err: (e as Error).message }, 'service: peer check failed; refusing the connection');
      return false;
    }
  };

  const runRequest = async (
    req: Request,
    entry: Entry,
  ): Promise<{ stdout: string; exitCode: number; stderr: string }> => {
    if (req.kind === KIND_STATUS) return { stdout: `${JSON.stringify(status())}\n`, exitCode: 0, stderr: '' };
    const sink: string[] = [];
    const work = async (): Promise<{ stdout: string; exitCode: number; stderr: string }> => {
      // Queued behind the same pod's earlier verb, and its shim has gone since (the runtime's timeout killed it):
      // nothing has been done for it, so not running it leaves the runtime's retry or DEL exactly right. Once a verb
      // has started it finishes and commits, whoever is still listening (the header).
      if (!entry.shimConnected) {
        counts.notRun++;
        log.info(
          { verb: entry.verb, containerId: entry.containerId, ifname: entry.ifname },
          'service: the shim left before its queued request started; not running it',
        );
        return { stdout: '', exitCode: 0, stderr: '' };
      }
      entry.state = 'running';
      const t0 = performance.now();
      const out = await runCni({
        env: req.env,
        stdin: req.stdin,
        platform: options.platform,
        runtime,
        createLogger: (o) => logs.create(o, sink),
        ...(options.defaults ? { defaults: options.defaults } : {}),
      });
      const seconds = (performance.now() - t0) / 1000;
      const verb = verbLabel(req.env.CNI_COMMAND);
      const code = codeLabel(out.exitCode, out.stdout);
      for (const s of sinks) s.verb(verb, code, seconds);
      return { ...out, stderr: sink.join('') };
    };
    const verb = req.env.CNI_COMMAND;
    if ((verb === 'ADD' || verb === 'DEL' || verb === 'CHECK') && req.env.CNI_CONTAINERID && req.env.CNI_IFNAME) {
      return queue.run(`${req.env.CNI_CONTAINERID}\0${req.env.CNI_IFNAME}`, work);
    }
    return work();
  };

  const onConnection = (socket: net.Socket): void => {
    if (!peerAllowed(socket)) {
      counts.refused++;
      log.warn({ address: options.address }, 'service: refused a connection from another user (nothing was read)');
      socket.destroy();
      return;
    }
    socket.on('error', () => undefined); // a shim that vanishes is normal; its request (if accepted) carries on
    if (pendingConnections >= maxPending) {
      counts.tooMany++;
      if (Date.now() - lastBusyWarning > 1000) {
        lastBusyWarning = Date.now();
        log.warn(
          { pending: pendingConnections },
          'service: too many connections with incomplete requests; closing new ones',
        );
      }
      socket.destroy();
      return;
    }
    pendingConnections++;
    const reader = new RequestReader();
    let accepted = false;
    const settle = (): void => {
      if (accepted) return;
      accepted = true;
      pendingConnections--;
      clearTimeout(timer);
      socket.off('data', onData);
    };
    const timer = setTimeout(() => {
      settle();
      counts.timedOut++;
      socket.destroy();
    }, requestTimeoutMs);
    socket.once('close', settle);
    const onData = (chunk: Buffer): void => {
      if (accepted) return; // nothing more is expected from the shim
      let req: Request | undefined;
      try {
        req = reader.push(chunk);
      } catch (e) {
        if (!(e instanceof ProtocolError)) throw e;
        settle();
        counts.refused++;
        socket.destroy();
        return;
      }
      if (!req) return;
      settle();
      if (req.version !== PROTOCOL_VERSION || (req.kind !== KIND_CNI && req.kind !== KIND_STATUS)) {
        socket.end(encodeVersionRefusal());
        return;
      }
      accept(socket, req);
    };
    socket.on('data', onData);
    socket.resume();
  };

  const accept = (socket: net.Socket, req: Request): void => {
    const entry: Entry = {
      id: nextId++,
      verb: req.kind === KIND_STATUS ? 'service-status' : (req.env.CNI_COMMAND ?? ''),
      ...(req.env.CNI_CONTAINERID ? { containerId: req.env.CNI_CONTAINERID } : {}),
      ...(req.env.CNI_IFNAME ? { ifname: req.env.CNI_IFNAME } : {}),
      state: 'queued',
      since: Date.now(),
      shimConnected: true,
    };
    if (req.kind === KIND_CNI) entries.set(entry.id, entry);
    socket.once('close', () => {
      entry.shimConnected = false;
    });
    socket.write(encodeAccept(ifServiceDies(req)));
    const done = runRequest(req, entry)
      .then(
        (out) => {
          if (req.kind === KIND_CNI) counts.served++;
          if (!socket.destroyed) socket.end(encodeResult(out.exitCode, out.stdout, out.stderr));
        },
        (e: unknown) => {
          // runCni never throws (dispatch turns every failure into error JSON); this is a bug in the service.
          counts.failed++;
          log.error({ err: (e as Error)?.stack ?? String(e) }, 'service: request failed');
          socket.destroy();
        },
      )
      .finally(() => {
        entries.delete(entry.id);
        running.delete(done);
      });
    running.add(done);
  };

  // Before the socket: a metrics address that cannot be bound refuses the start, before any shim is served.
  let metrics: MetricsServer | undefined;
  if (options.metrics) {
    const { startMetrics } = await import('./metrics');
    const defaultDir = options.defaults?.stateDir ?? defaultStateDir(options.platform);
    metrics = await startMetrics({
      ...options.metrics,
      gauges: {
        requests: () => {
          const all = [...entries.values()];
          const running = all.filter((e) => e.state === 'running').length;
          return { queued: all.length - running, running };
        },
        abandonedCalls: abandonedCount,
        // A directory that cannot be listed (permissions) is left out of the scrape rather than failing all of it.
        attachments: () =>
          [...new Set([defaultDir, ...runtime.stateDirs])].flatMap((stateDir) => {
            try {
              return [{ stateDir, count: countRecordFiles(stateDir, 'attachment') }];
            } catch {
              return [];
            }
          }),
        pendingConnections: () => pendingConnections,
        podHealth: () => agent.status().health,
      },
      onError: (message) => log.error({ err: message }, 'service: metrics'),
    });
    sinks.push(metrics);
    log.info({ metrics: metrics.url }, 'service: metrics at ' + metrics.url);
  }
  const closeMetrics = async (): Promise<void> => {
    await metrics?.close();
  };

  let stopListening: () => Promise<void>;
  try {
    if (isPipe(options.address)) {
      const allowSids = options.allowSids ?? SERVICE_SIDS;
      const pipe = listenPipe({
        address: options.address,
        native,
        allowSids,
        onConnection,
        onRefused: (who) => {
          counts.refused++;
          log.warn({ address: options.address, ...who }, 'service: refused a connection (nothing was read)');
        },
        onError: (message) => log.error({ address: options.address, err: message }, 'service: pipe server'),
      });
      stopListening = () => Promise.resolve(pipe.close());
      log.info(
        { address: options.address, protocol: PROTOCOL_VERSION, dacl: pipe.dacl, allowSids },
        'service: listening',
      );
    } else {
      const server = net.createServer({ pauseOnConnect: true }, onConnection);
      const unlock = await listenExclusive(server, options.address, options.socketMode ?? 0o600, native);
      stopListening = () =>
        new Promise<void>((resolve) =>
          server.close(() => {
            unlock();
            resolve();
          }),
        );
      log.info({ address: options.address, protocol: PROTOCOL_VERSION }, 'service: listening');
    }
  } catch (e) {
    await closeMetrics();
    throw e;
  }

  agent.start();
  // HNS's own word that it restarted, where the host offers it: the agent's recovery pass (audit, release, repair)
  // right after HNS is back, not at its next probe, which stays the fallback.
  const hnsWatch =
    options.agent?.hnsNotifications === false
      ? undefined
      : watchHnsService(new Hcn(native, native.capabilities()), (event) => agent.hnsNotified(event), {
          onError: (e) => log.warn({ err: (e as Error).message }, 'service: HNS service notifications not registered'),
        });
  // After it accepts: a shim is served meanwhile, and an ADD racing the create finds the network either way.
  if (options.createNetwork) {
    const conf = options.createNetwork;
    void prepareNetwork(conf, runtime, log).then(
      (r) =>
        r.outcome === 'not-configured'
          ? log.info({ network: conf.networkName }, `service: network at start: nothing to create (${r.why})`)
          : log.info(
              { network: r.network.name, id: r.network.id, outcome: r.outcome },
              `service: network at start: ${r.outcome === 'created' ? 'created' : 'already there:'} ${r.network.name}`,
            ),
      (e: unknown) =>
        log.error(
          { network: conf.networkName, err: (e as Error)?.message ?? String(e) },
          'service: network at start: could not create it; the first ADD will try again',
        ),
    );
  }
  let stopped: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    await (stopped ??= stopListening());
    await hnsWatch?.close();
    await agent.stop();
    while (running.size > 0) await Promise.allSettled([...running]);
  };
  let retire: (reason: string) => void = () => undefined;
  const retired = new Promise<string>((resolve) => (retire = resolve));
  const unwatch = watchBound(maxAbandoned, (reason) => {
    log.error(
      { address: options.address, reason, abandoned: abandonedStatus(maxAbandoned).byOp },
      'service: too many abandoned HCN calls; no longer accepting (shims run hcn-cni-standalone), exiting once the requests in flight have finished',
    );
    void drain()
      .then(closeMetrics)
      .then(() => retire(reason));
  });

  return {
    address: options.address,
    status,
    repair: () => repair.run(),
    close: async () => {
      unwatch();
      repair.stop();
      await drain();
      await closeMetrics();
    },
    retired,
  };
}
