/**
 * `hcn-cni serve [--listen ADDRESS] [--metrics HOST:PORT]`: the resident service behind the shim (src/service). It runs until SIGTERM,
 * SIGINT (or on Windows SIGBREAK/SIGHUP), then stops accepting, lets every accepted request finish (a verb is never cut short by a shutdown), and
 * exits 0. The address defaults to /run/hcn-cni/service.sock (Linux) or \\.\pipe\hcn-cni (Windows), or
 * HCN_CNI_SERVICE when set — the same address the shim uses. It also ends by itself, with EXIT_RETIRED (75), when
 * too many HCN calls are past their timeout and still unanswered (src/service/abandoned-bound.ts): the DaemonSet's
 * container then ends and the kubelet starts a fresh service, while the shims run hcn-cni-standalone.
 */
import { splitCniPath } from '../cni/env';
import { parseMetricsAddress } from './metrics-address';
import { loadConf } from './operator/conf';
import type { NetConf } from '../cni/types';
import { defaultServiceAddress } from '../service/client';
import { DEFAULT_MAX_ABANDONED_CALLS, EXIT_RETIRED } from '../service/abandoned-bound';
import { startService } from '../service/service';

export interface ServeIo {
  env: NodeJS.ProcessEnv;
  load: { addonPath?: string; libraryPath?: string };
  err(s: string): void;
}

export const SERVE_USAGE = `usage: hcn-cni serve [--listen ADDRESS] [--max-abandoned-calls N] [--hns-probe-seconds S]
                     [--no-hns-notifications] [--metrics HOST:PORT [--metrics-allow-remote]]
                     [--conf-dir DIR [--bin-dir DIRS]] [--create-network FILE]

Runs the hcn-cni service: the shim (hcn-cni in the CNI bin directory) sends each CNI request here and falls back to
hcn-cni-standalone when the service is not running. ADDRESS is a unix socket path (default
/run/hcn-cni/service.sock) or a Windows pipe name (default \\\\.\\pipe\\hcn-cni); HCN_CNI_SERVICE overrides the
default, as it does for the shim. Stops on SIGTERM/SIGINT after the requests in flight have finished.

An HCN call past hnsTimeoutSeconds cannot be cancelled and keeps running (abandoned); when N of them (default
${DEFAULT_MAX_ABANDONED_CALLS}) are unanswered at once, the service stops accepting, lets the requests in flight
finish and exits ${EXIT_RETIRED}, to be restarted fresh (the DaemonSet does that).

In the background the service audits the whole node for leaks, per state directory it has served, every
auditIntervalSeconds of that directory's configuration, and at once when HNS answers again after failing: it asks
HNS whether it answers every S seconds (--hns-probe-seconds, default 5; 0: only the verbs' calls tell). Where the
host offers HNS's service notifications (HcnRegisterServiceCallback), HNS going away and coming back is known at once
(docs/hns-restart.md); --no-hns-notifications leaves it to the probe.

--conf-dir DIR: the runtime's CNI configuration directory. hcn-cni's networks in it are served from the start (audit,
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

export async function serve(argv: readonly string[], io: ServeIo): Promise<number> {
  let address = io.env.HCN_CNI_SERVICE || defaultServiceAddress(process.platform);
  let maxAbandonedCalls: number | undefined;
  let metricsText = io.env.HCN_CNI_METRICS || undefined;
  let allowRemote = false;
  let probeMs: number | undefined;
  let confDir: string | undefined;
  let binDirs: string[] | undefined;
  let hnsNotifications = true;
  let createNetworkFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      io.err(SERVE_USAGE);
      return 0;
    }
    if (a === '--listen' && argv[i + 1]) address = argv[++i]!;
    else if (a.startsWith('--listen=') && a.length > 9) address = a.slice(9);
    else if (a === '--max-abandoned-calls' || a.startsWith('--max-abandoned-calls=')) {
      const text = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!text || !/^[1-9][0-9]{0,5}$/.test(text)) {
        io.err(
          `hcn-cni serve: --max-abandoned-calls needs a whole number from 1 to 999999, got ${JSON.stringify(text ?? '')}\n`,
        );
        return 2;
      }
      maxAbandonedCalls = Number(text);
    } else if (a === '--hns-probe-seconds' || a.startsWith('--hns-probe-seconds=')) {
      const text = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!text || !/^[0-9]{1,5}$/.test(text)) {
        io.err(
          `hcn-cni serve: --hns-probe-seconds needs a whole number from 0 to 99999, got ${JSON.stringify(text ?? '')}\n`,
        );
        return 2;
      }
      probeMs = Number(text) * 1000;
    } else if (a === '--no-hns-notifications') {
      hnsNotifications = false;
    } else if (a === '--metrics' || a.startsWith('--metrics=')) {
      const text = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!text) {
        io.err(`hcn-cni serve: --metrics needs HOST:PORT, e.g. 127.0.0.1:9464\n`);
        return 2;
      }
      metricsText = text;
    } else if (a === '--conf-dir' || a.startsWith('--conf-dir=') || a === '--bin-dir' || a.startsWith('--bin-dir=')) {
      const text = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      const flag = a.split('=')[0]!;
      if (!text) {
        io.err(`hcn-cni serve: ${flag} needs a directory\n`);
        return 2;
      }
      if (flag === '--conf-dir') confDir = text;
      else binDirs = splitCniPath(text, process.platform);
    } else if (a === '--metrics-allow-remote') {
      allowRemote = true;
    } else if (a === '--create-network' || a.startsWith('--create-network=')) {
      const text = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!text) {
        io.err(`hcn-cni serve: --create-network needs the conflist FILE\n`);
        return 2;
      }
      createNetworkFile = text;
    } else {
      io.err(`hcn-cni serve: unexpected argument ${JSON.stringify(a)}\n${SERVE_USAGE}`);
      return 2;
    }
  }
  let metrics: { host: string; port: number } | undefined;
  if (metricsText !== undefined) {
    const parsed = parseMetricsAddress(metricsText, allowRemote);
    if (typeof parsed === 'string') {
      io.err(`hcn-cni serve: ${parsed}\n`);
      return 2;
    }
    metrics = parsed;
  } else if (allowRemote) {
    io.err(`hcn-cni serve: --metrics-allow-remote needs --metrics HOST:PORT (or HCN_CNI_METRICS)\n`);
    return 2;
  }
  let createNetwork: NetConf | undefined;
  if (createNetworkFile !== undefined) {
    try {
      // "installed": the conflist `hcn-cni install` wrote, in containerd's conf directory (loaded only for this).
      const file =
        createNetworkFile === 'installed'
          ? (await import('./install')).installedConflistPath(process.platform, io.env)
          : createNetworkFile;
      createNetwork = loadConf({ platform: process.platform, file }).conf;
    } catch (e) {
      io.err(`hcn-cni serve: --create-network: ${((e as Error)?.message ?? String(e)).split('\n')[0]}\n`);
      return 1;
    }
  }
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      address,
      platform: process.platform,
      pid: process.pid,
      ...(process.platform !== 'win32' && typeof process.getuid === 'function' ? { allowUid: process.getuid() } : {}),
      load: io.load,
      ...(io.env.HCN_CNI_CLAIMS_DIR ? { claimsDir: io.env.HCN_CNI_CLAIMS_DIR } : {}),
      ...(maxAbandonedCalls !== undefined ? { maxAbandonedCalls } : {}),
      ...(probeMs !== undefined || !hnsNotifications
        ? {
            agent: { ...(probeMs !== undefined ? { probeMs } : {}), ...(hnsNotifications ? {} : { hnsNotifications }) },
          }
        : {}),
      ...(metrics ? { metrics } : {}),
      ...(confDir ? { confDir } : {}),
      ...(binDirs ? { binDirs } : {}),
      ...(createNetwork ? { createNetwork } : {}),
    });
  } catch (e) {
    // A refusal to start (the address is taken or is not ours to replace, the addon cannot load) is one line for
    // the operator, not a stack trace.
    io.err(`hcn-cni serve: ${((e as Error)?.message ?? String(e)).split('\n')[0]}\n`);
    return 1;
  }
  const retired = await Promise.race([
    new Promise<undefined>((resolve) => {
      // Windows has no SIGTERM: a console's Ctrl+Break and close arrive as SIGBREAK and SIGHUP.
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGBREAK', 'SIGHUP'] as const)
        process.once(signal, () => resolve(undefined));
    }),
    service.retired,
  ]);
  if (retired !== undefined) {
    // The process ends through the addon's exitNow (src/cli/hcn-cni.ts): the abandoned calls' threads are never
    // waited for.
    io.err(`hcn-cni serve: ${retired}; exiting ${EXIT_RETIRED} so that a fresh service is started\n`);
    return EXIT_RETIRED;
  }
  await service.close();
  return 0;
}
