/**
 * `hcn-cni doctor [--json] [--bundle FILE]`: what is wrong on this node (src/doctor: one read of HNS, the state and
 * the service, then pure checks), with a severity, why and what to run next for each finding; exit 0, 1 or 2 by the
 * worst (info, warning, error). Read-only: it deletes and writes nothing in HNS or the state. With --bundle, also a zip
 * for an issue report (doctor-bundle.ts). It runs standalone, and asks the service for its status the way
 * `hcn-cni service` does. Like serve, install and uninstall it is in the whole program only (hcn-cni.ts).
 */
import * as os from 'os';
import { parseArgs as parseUtilArgs } from 'node:util';
import type { OpsArgs } from './operator/args';
import type { OpsContext, OpsWriters } from './operator/context';
import type { DoctorDeps } from '../doctor/gather';
import type { ServiceView } from '../doctor/snapshot';
import type { ServiceStatus } from '../service/service';
import { UsageError } from './usage-error';
import { renderFindings, reportJson, serviceAddress } from './doctor-report';

export const DOCTOR_USAGE = `usage: hcn-cni doctor [--json] [--bundle FILE] [options]

What is wrong on this node: every HNS network and endpoint whatever its owner, our state, the service and the host,
as findings with a severity (info, warning, error), why, and what to run next. Read-only.

  --json                the findings (and their counts) as JSON on stdout
  --bundle FILE         also write a zip for an issue report: the report, every HNS object, the state directory,
                        the service's status and metrics, the last log lines, the conflists with secrets removed,
                        versions; bounded in size; an existing FILE is never overwritten
  --service ADDR        the service's socket or pipe (default HCN_CNI_SERVICE, else the default address)
  --conf FILE, --state-dir DIR, -v/--verbose, -h/--help   as for the other commands (hcn-cni help)

Exit status: 0 nothing worse than info; 1 a warning; 2 an error (or a usage error); 3 the bundle could not be written.
`;

interface DoctorArgs {
  help: boolean;
  json: boolean;
  verbose: boolean;
  bundle?: string;
  service?: string;
  conf?: string;
  stateDir?: string;
}

export function parseDoctorArgs(argv: readonly string[]): DoctorArgs {
  let parsed;
  try {
    parsed = parseUtilArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        json: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        bundle: { type: 'string' },
        service: { type: 'string' },
        conf: { type: 'string' },
        'state-dir': { type: 'string' },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values;
  for (const k of ['bundle', 'service', 'conf', 'state-dir'] as const)
    if (v[k] === '') throw new UsageError(`--${k} needs a value`);
  return {
    help: v.help ?? false,
    json: v.json ?? false,
    verbose: v.verbose ?? false,
    ...(v.bundle !== undefined ? { bundle: v.bundle } : {}),
    ...(v.service !== undefined ? { service: v.service } : {}),
    ...(v.conf !== undefined ? { conf: v.conf } : {}),
    ...(v['state-dir'] !== undefined ? { stateDir: v['state-dir'] } : {}),
  };
}

/** The parts of the service's status the doctor judges (a service of an older version may lack some). */
export function serviceView(address: string, s: ServiceStatus): ServiceView {
  const queued = s.inFlight?.filter((r) => r.state === 'queued').length ?? 0;
  return {
    running: true,
    address,
    pid: s.pid,
    requests: { queued, running: (s.inFlight?.length ?? 0) - queued },
    ...(s.abandoned ? { abandoned: { count: s.abandoned.count, bound: s.abandoned.bound } } : {}),
    ...(s.agent?.hnsFailingSince ? { hnsFailingSince: s.agent.hnsFailingSince } : {}),
    ...(s.agent?.lastAuditAt ? { lastAuditAt: s.agent.lastAuditAt } : {}),
    ...(s.agent?.unserved ? { unserved: s.agent.unserved } : {}),
    ...(s.confDir ? { confDir: s.confDir } : {}),
  };
}

/** What the doctor reads through: the operator's context (configuration, runtime) and the service's client. */
async function doctorDeps(ctx: OpsContext, args: DoctorArgs): Promise<DoctorDeps> {
  const { graceMs } = await import('../orphans/audit');
  const { pluginVersion } = await import('./operator/version');
  const { queryStatus } = await import('../service/transport/client');
  const address = await serviceAddress(ctx, args.service);
  let startTime: (pid: number) => string | null = () => null;
  let error: string | undefined;
  try {
    startTime = ctx.deps().hns.os().processStartTime;
  } catch (e) {
    error = `the native addon could not be loaded: ${(e as Error).message}`;
  }
  // The state store needs the addon (its locks, process start times): without it the state is not read.
  const store = !error && ctx.stateDirExists() ? ctx.deps().stores.store(ctx.conf, ctx.log) : undefined;
  const status = await queryStatus(address).then(
    (s) => s,
    (e: unknown) => new Error((e as Error).message),
  );
  // The node agent's memory of endpoints attached to nothing, where the service runs one: their age is then known.
  const since = status instanceof Error ? undefined : status.agent?.unattachedSince;
  return {
    hns: () => ctx.api(),
    ...(store
      ? {
          state: {
            dir: ctx.conf.stateDir,
            snapshot: () => store.snapshot(),
            housekeeping: () => store.housekeeping(),
            adaptersSeen: () => store.adaptersSeen(),
          },
        }
      : {}),
    processStartTime: startTime,
    clock: { now: ctx.sys.now },
    service: async () =>
      status instanceof Error ? { running: false, address, reason: status.message } : serviceView(address, status),
    ...(since
      ? {
          unattachedSince: (ids) =>
            Object.fromEntries(
              ids.flatMap((id) => (since[id.toLowerCase()] ? [[id.toLowerCase(), since[id.toLowerCase()]!]] : [])),
            ),
        }
      : {}),
    host: {
      platform: `${ctx.platform}/${os.arch()}`,
      build: os.release(),
      plugin: pluginVersion(),
      confSource: ctx.loaded.source,
      ...(error ? { error } : {}),
    },
    graceMs: graceMs(ctx.conf.hnsTimeoutSeconds),
  };
}

async function runWith(ctx: OpsContext, args: DoctorArgs): Promise<number> {
  const { doctor } = await import('../doctor/doctor');
  const { exitCodeOf } = await import('../doctor/finding');
  const { snapshot, findings } = await doctor(await doctorDeps(ctx, args));
  const code = exitCodeOf(findings);
  if (args.json) ctx.json(reportJson(findings, code));
  else ctx.out(renderFindings(findings));
  if (args.bundle) {
    const { writeBundle } = await import('./doctor-bundle');
    const written = await writeBundle(ctx, args.bundle, {
      snapshot,
      findings,
      exitCode: code,
      ...(args.service !== undefined ? { service: args.service } : {}),
    });
    if (!written.ok) {
      ctx.io.err(`hcn-cni doctor: ${written.error}\n`);
      return 3;
    }
    ctx.io.err(`hcn-cni doctor: wrote ${args.bundle} (${written.bytes} bytes, ${written.entries} files)\n`);
  }
  return code;
}

export async function runDoctor(
  argv: readonly string[],
  io: OpsWriters & { platform?: NodeJS.Platform; pid?: number; now?: () => number },
): Promise<number> {
  let args: DoctorArgs;
  try {
    args = parseDoctorArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`hcn-cni doctor: ${e.message}\n\n${DOCTOR_USAGE}`);
    return 2;
  }
  if (args.help) {
    io.out(DOCTOR_USAGE);
    return 0;
  }
  const platform = io.platform ?? process.platform;
  const { loadConf } = await import('./operator/conf');
  const { OpsContext } = await import('./operator/context');
  const opsArgs: OpsArgs = {
    help: false,
    json: args.json,
    verbose: args.verbose,
    dryRun: true,
    clearQuarantine: false,
  };
  try {
    const loaded = loadConf({
      platform,
      ...(args.conf ? { file: args.conf } : {}),
      ...(args.stateDir ? { stateDir: args.stateDir } : {}),
    });
    const ctx = new OpsContext(io, opsArgs, loaded, { platform, pid: io.pid ?? process.pid, now: io.now ?? Date.now });
    return await runWith(ctx, args);
  } catch (e) {
    const { describeFailure } = await import('./operator/describe-failure');
    io.err(`hcn-cni doctor: ${describeFailure(e, { platform, hcnSim: io.env.HCN_SIM, verbose: args.verbose })}\n`);
    return 2;
  }
}
