/**
 * `hcn-cni serve [--listen ADDRESS] [--metrics HOST:PORT]`: the resident service behind the shim (src/service). It runs until SIGTERM,
 * SIGINT (or on Windows SIGBREAK/SIGHUP), then stops accepting, lets every accepted request finish (a verb is never cut short by a shutdown), and
 * exits 0. The address defaults to /run/hcn-cni/service.sock (Linux) or \\.\pipe\hcn-cni (Windows), or
 * HCN_CNI_SERVICE when set — the same address the shim uses. It also ends by itself, with EXIT_RETIRED (75), when
 * too many HCN calls are past their timeout and still unanswered (src/service/hand-over/abandoned-bound.ts): the DaemonSet's
 * container then ends and the kubelet starts a fresh service, while the shims run hcn-cni-standalone. Started while
 * another hcn-cni service serves the address, it takes the address over (src/service/hand-over/hand-over.ts) and the
 * other one exits 0 once its requests in flight have finished.
 */
import { claimsDirFor } from '../cni/defaults';
import { splitCniPath } from '../cni/env';
import { parseMetricsAddress } from './metrics-address';
import { loadConf } from './operator/conf';
import type { NetConf } from '../cni/types';
import { defaultServiceAddress, queryStatus } from '../service/transport/client';
import { DEFAULT_MAX_ABANDONED_CALLS, EXIT_RETIRED } from '../service/hand-over/abandoned-bound';
import { forgetRetired, isRetired, noteRetired, retiredPodsDir } from '../service/hand-over/retired-pods';
import { startService } from '../service/service';

export interface ServeIo {
  env: NodeJS.ProcessEnv;
  load: { addonPath?: string; libraryPath?: string };
  err(s: string): void;
  /** Where --help goes, as every other command's help does (stdout); default: err. */
  out?(s: string): void;
}

export const SERVE_USAGE = `usage: hcn-cni serve [--listen ADDRESS] [--max-abandoned-calls N] [--hns-probe-seconds S]
                     [--no-hns-notifications] [--metrics HOST:PORT [--metrics-allow-remote]]
                     [--conf-dir DIR [--bin-dir DIRS]] [--create-network FILE] [--no-take-over]
                     [--stay-after-hand-over]

Runs the hcn-cni service: the shim (hcn-cni in the CNI bin directory) sends each CNI request here and falls back to
hcn-cni-standalone when the service is not running. ADDRESS is a unix socket path (default
/run/hcn-cni/service.sock) or a Windows pipe name (default \\\\.\\pipe\\hcn-cni); HCN_CNI_SERVICE overrides the
default, as it does for the shim. Stops on SIGTERM/SIGINT after the requests in flight have finished.

Upgrading: when another hcn-cni service serves ADDRESS, this one takes it over without a gap — the other keeps
serving until this one's socket is at the address (Windows: until this one's pipe instances wait beside its own),
then finishes what it accepted and exits 0 — so a new version is started beside the old one and no shim falls back
meanwhile. --no-take-over refuses to start instead. Its metrics port (--metrics), held by the other one, is bound
once the other lets go of it at the hand-over.
--stay-after-hand-over: once handed over (and its requests finished), this one stays alive serving nothing until a
stop signal, then exits 0 — for a container that would be restarted when it exits, and would take the address back.
HCN_CNI_POD_UID (the DaemonSet sets it to its pod's uid) is shown in the status; a readiness probe run with the same
variable fails unless the service answering runs in that pod. A pod's service that handed over notes the pod, and a
service of that pod started again (a container restart) does not take the address back while another serves it
(docs/install.md "Upgrading").

An HCN call past hnsTimeoutSeconds cannot be cancelled and keeps running (abandoned); when N of them (default
${DEFAULT_MAX_ABANDONED_CALLS}) are unanswered at once, the service stops accepting, lets the requests in flight
finish and exits ${EXIT_RETIRED}, to be restarted fresh (the DaemonSet does that).

In the background the service audits the whole node for leaks, per state directory it has served, every
auditIntervalSeconds of that directory's configuration, and at once when HNS answers again after failing: it asks
HNS whether it answers every S seconds (--hns-probe-seconds, default 5; 0: only the verbs' calls tell). Where the
host offers HNS's service notifications (HcnRegisterServiceCallback), HNS going away and coming back is known at once
(docs/hns-restart.md); --no-hns-notifications leaves it to the probe.

--conf-dir DIR|installed: the runtime's CNI configuration directory ("installed": containerd's, and its bin
directories for --bin-dir, found as hcn-cni install finds them). hcn-cni's networks in it are served from the start (audit,
pod health, repair, kept IPs released), before any verb of theirs arrives; without it, a network is served once a
verb of it has come. --bin-dir DIRS: where their delegated IPAM plugins are (CNI_PATH form: ';'-separated on Windows, ':' elsewhere).

--metrics HOST:PORT (or HCN_CNI_METRICS) serves Prometheus metrics at http://HOST:PORT/metrics; off by default.
HOST is an IP address ([::1] for IPv6) or localhost; port 0 lets the system choose (the log says which). The
metrics name verbs, HNS operations and errors and state directories of this node: a HOST other than a loopback
address is refused unless --metrics-allow-remote says that whoever reaches it may read them.

--create-network FILE (or "installed": the conflist hcn-cni install wrote): once it accepts, the service creates the bridge network that FILE's hcn-cni configuration
creates on demand ("createNetwork"), so that the first pod's ADD does not bind the NIC (the uplink blips while HNS
binds it). Off by default: a service started by hand must not blip the node; deploy/daemonset.yaml turns it on with
the conflist install wrote. A network that exists is left as it is; a failure is logged and the first ADD tries again.
`;

/** What the command line (and the environment) asked for. */
interface ServeArgs {
  address: string;
  maxAbandonedCalls?: number;
  metricsText?: string;
  allowRemote: boolean;
  probeMs?: number;
  confDir?: string;
  binDirs?: string[];
  hnsNotifications: boolean;
  createNetworkFile?: string;
  takeOver: boolean;
  stayAfterHandOver: boolean;
}

/** Said of a flag with no value where one is needed and that has no message of its own. */
const UNEXPECTED = Symbol('unexpected');
/** A flag's value into the arguments: undefined, or what is wrong with it (one line). */
type TakeValue = (args: ServeArgs, text: string | undefined) => string | typeof UNEXPECTED | undefined;

/** The flags that take a value, as `--flag VALUE` or `--flag=VALUE`. */
const VALUE_FLAGS = new Map<string, TakeValue>([
  ['--listen', (args, text) => (text ? void (args.address = text) : UNEXPECTED)],
  [
    '--max-abandoned-calls',
    (args, text) =>
      text && /^[1-9][0-9]{0,5}$/.test(text)
        ? void (args.maxAbandonedCalls = Number(text))
        : `--max-abandoned-calls needs a whole number from 1 to 999999, got ${JSON.stringify(text ?? '')}`,
  ],
  [
    '--hns-probe-seconds',
    (args, text) =>
      text && /^[0-9]{1,5}$/.test(text)
        ? void (args.probeMs = Number(text) * 1000)
        : `--hns-probe-seconds needs a whole number from 0 to 99999, got ${JSON.stringify(text ?? '')}`,
  ],
  [
    '--metrics',
    (args, text) => (text ? void (args.metricsText = text) : '--metrics needs HOST:PORT, e.g. 127.0.0.1:9464'),
  ],
  ['--conf-dir', (args, text) => (text ? void (args.confDir = text) : '--conf-dir needs a directory')],
  [
    '--bin-dir',
    (args, text) => (text ? void (args.binDirs = splitCniPath(text, process.platform)) : '--bin-dir needs a directory'),
  ],
  [
    '--create-network',
    (args, text) => (text ? void (args.createNetworkFile = text) : '--create-network needs the conflist FILE'),
  ],
]);

/** The flags that take none. */
const SWITCHES = new Map<string, (args: ServeArgs) => void>([
  ['--no-hns-notifications', (args) => (args.hnsNotifications = false)],
  ['--metrics-allow-remote', (args) => (args.allowRemote = true)],
  ['--no-take-over', (args) => (args.takeOver = false)],
  ['--stay-after-hand-over', (args) => (args.stayAfterHandOver = true)],
]);

/** The arguments, or the exit code once --help is shown or a wrong argument is reported. */
function parseServeArgs(argv: readonly string[], io: ServeIo): ServeArgs | number {
  const args: ServeArgs = {
    address: io.env.HCN_CNI_SERVICE || defaultServiceAddress(process.platform),
    allowRemote: false,
    hnsNotifications: true,
    takeOver: true,
    stayAfterHandOver: false,
  };
  if (io.env.HCN_CNI_METRICS) args.metricsText = io.env.HCN_CNI_METRICS;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      (io.out ?? io.err)(SERVE_USAGE);
      return 0;
    }
    const eq = a.indexOf('=');
    const take = VALUE_FLAGS.get(eq >= 0 ? a.slice(0, eq) : a);
    const wrong = take
      ? take(args, eq >= 0 ? a.slice(eq + 1) : argv[++i])
      : SWITCHES.has(a)
        ? void SWITCHES.get(a)!(args)
        : UNEXPECTED;
    if (wrong === UNEXPECTED) {
      io.err(`hcn-cni serve: unexpected argument ${JSON.stringify(a)}\n${SERVE_USAGE}`);
      return 2;
    }
    if (wrong !== undefined) {
      io.err(`hcn-cni serve: ${wrong}\n`);
      return 2;
    }
  }
  return args;
}
/** The metrics' address, if asked for; or the line that says why it is refused. */
function metricsOf(args: ServeArgs): { host: string; port: number } | undefined | { refused: string } {
  if (args.metricsText !== undefined) {
    const parsed = parseMetricsAddress(args.metricsText, args.allowRemote);
    return typeof parsed === 'string' ? { refused: parsed } : parsed;
  }
  if (args.allowRemote) return { refused: '--metrics-allow-remote needs --metrics HOST:PORT (or HCN_CNI_METRICS)' };
  return undefined;
}

/** --conf-dir installed: containerd's CNI directories, as `hcn-cni install` found them (--bin-dir still wins). */
async function installedDirs(args: ServeArgs, env: NodeJS.ProcessEnv): Promise<void> {
  const dirs = (await import('./install')).installedCniDirs(process.platform, env);
  args.confDir = dirs.confDir;
  args.binDirs ??= dirs.binDirs;
}

/** The configuration of --create-network ("installed": the conflist `hcn-cni install` wrote). */
async function createNetworkOf(file: string, env: NodeJS.ProcessEnv): Promise<NetConf> {
  // Loaded only for this: containerd's conf directory is install's business.
  const path = file === 'installed' ? (await import('./install')).installedConflistPath(process.platform, env) : file;
  return loadConf({ platform: process.platform, file: path }).conf;
}

function serviceOptions(
  args: ServeArgs,
  io: ServeIo,
  metrics: { host: string; port: number } | undefined,
  createNetwork: NetConf | undefined,
): Parameters<typeof startService>[0] {
  const { maxAbandonedCalls, probeMs, hnsNotifications, confDir, binDirs } = args;
  const claimsDir = claimsDirFor(io.env, process.platform);
  return {
    address: args.address,
    platform: process.platform,
    pid: process.pid,
    ...(io.env.HCN_CNI_POD_UID ? { pod: io.env.HCN_CNI_POD_UID } : {}),
    ...(process.platform !== 'win32' && typeof process.getuid === 'function' ? { allowUid: process.getuid() } : {}),
    load: io.load,
    ...(claimsDir ? { claimsDir } : {}),
    ...(maxAbandonedCalls !== undefined ? { maxAbandonedCalls } : {}),
    ...(probeMs !== undefined || !hnsNotifications
      ? { agent: { ...(probeMs !== undefined ? { probeMs } : {}), ...(hnsNotifications ? {} : { hnsNotifications }) } }
      : {}),
    ...(metrics ? { metrics } : {}),
    ...(confDir ? { confDir } : {}),
    ...(binDirs ? { binDirs } : {}),
    ...(createNetwork ? { createNetwork } : {}),
    takeOver: args.takeOver,
  };
}

/**
 * Runs until a stop signal (exit 0, once the requests in flight have finished), a hand-over to a new service (exit 0,
 * likewise; or, with --stay-after-hand-over, at the stop signal that follows) or the service retires.
 */
async function runUntilStopped(
  service: Awaited<ReturnType<typeof startService>>,
  io: ServeIo,
  args: ServeArgs,
): Promise<number> {
  const handedOver = service.handedOver.then((what) => ({ what }));
  const stopSignal = stopSignalled();
  const retired = await Promise.race([stopSignal, service.retired, handedOver]);
  if (typeof retired === 'object') {
    const pod = io.env.HCN_CNI_POD_UID;
    const unnoted = pod ? noteRetired(retiredPodsDir(args.address, process.platform), pod) : undefined;
    if (unnoted) io.err(`hcn-cni serve: could not note that pod ${pod} handed over: ${unnoted}\n`);
    return afterHandOver(retired.what, io, args.stayAfterHandOver, stopSignal);
  }
  if (retired !== undefined) {
    // The process ends through the addon's exitNow (src/cli/hcn-cni.ts): the abandoned calls' threads are never
    // waited for.
    io.err(`hcn-cni serve: ${retired}; exiting ${EXIT_RETIRED} so that a fresh service is started\n`);
    return EXIT_RETIRED;
  }
  await service.close();
  return 0;
}

/** Resolves at the first stop signal (Windows has no SIGTERM: a console's Ctrl+Break and close are SIGBREAK, SIGHUP). */
function stopSignalled(): Promise<undefined> {
  return new Promise<undefined>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGBREAK', 'SIGHUP'] as const)
      process.once(signal, () => resolve(undefined));
  });
}

/**
 * This pod's service no longer serves (`what` says why): exit 0, or with --stay-after-hand-over stay alive until
 * stopped — a container that exits is restarted by the kubelet (restartPolicy Always), and a restarted service would
 * take the address back from the new one; this one stays, serving nothing, until its pod is deleted.
 */
async function afterHandOver(
  what: string,
  io: ServeIo,
  stay: boolean,
  stopSignal: Promise<undefined>,
): Promise<number> {
  if (!stay) {
    io.err(`hcn-cni serve: ${what}; exiting 0\n`);
    return 0;
  }
  io.err(`hcn-cni serve: ${what}; staying, serving nothing, until stopped (--stay-after-hand-over)\n`);
  const keepAlive = setInterval(() => undefined, 1 << 30); // signal handlers alone do not keep Node running
  await stopSignal;
  clearInterval(keepAlive);
  io.err('hcn-cni serve: stopped after the hand-over; exiting 0\n');
  return 0;
}

/**
 * The pod's service handed the address over before (retired-pods.ts) and a service serves it now: what this one says
 * instead of taking it back; undefined when it may start (no note, or nothing serves: the note is forgotten).
 */
async function alreadyHandedOver(args: ServeArgs, io: ServeIo): Promise<string | undefined> {
  const pod = io.env.HCN_CNI_POD_UID;
  const dir = retiredPodsDir(args.address, process.platform);
  if (!pod || !args.takeOver || !isRetired(dir, pod)) return undefined;
  const serving = await queryStatus(args.address).catch(() => undefined);
  if (serving)
    return `pod ${pod}'s service handed ${args.address} over before; not taking it back from pid ${serving.pid}`;
  forgetRetired(dir, pod);
  return undefined;
}

const firstLine = (e: unknown): string => ((e as Error)?.message ?? String(e)).split('\n')[0]!;

export async function serve(argv: readonly string[], io: ServeIo): Promise<number> {
  const args = parseServeArgs(argv, io);
  if (typeof args === 'number') return args;
  const metrics = metricsOf(args);
  if (metrics && 'refused' in metrics) {
    io.err(`hcn-cni serve: ${metrics.refused}\n`);
    return 2;
  }
  let createNetwork: NetConf | undefined;
  try {
    if (args.confDir === 'installed') await installedDirs(args, io.env);
    if (args.createNetworkFile !== undefined) createNetwork = await createNetworkOf(args.createNetworkFile, io.env);
  } catch (e) {
    io.err(`hcn-cni serve: --create-network: ${firstLine(e)}\n`);
    return 1;
  }
  const handedOverBefore = await alreadyHandedOver(args, io);
  if (handedOverBefore) return afterHandOver(handedOverBefore, io, args.stayAfterHandOver, stopSignalled());
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(serviceOptions(args, io, metrics, createNetwork));
  } catch (e) {
    // A refusal to start (the address is taken or is not ours to replace, the addon cannot load) is one line for
    // the operator, not a stack trace.
    io.err(`hcn-cni serve: ${firstLine(e)}\n`);
    return 1;
  }
  return runUntilStopped(service, io, args);
}
