/**
 * `hcn-cni selftest [--network-of-its-own] [--report FILE]`: a safe conformance run against this host's HNS — the
 * calls the plugin relies on, on objects the self-test names itself (src/selftest/plan.ts), each answer checked and
 * recorded. Loaded only for this verb; not in the CNI executable's main script (like serve, install, uninstall).
 * Exit codes: 0 every answer is what the plugin relies on, 1 one is not (or something was left), 2 usage error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { splitCniPath } from '../cni/env';
import { createIpamClient } from '../cni/ipam';
import { defaultBinDir } from '../cni/defaults';
import { newGuid } from '../net/guid';
import { formatIpv4, parseIpv4Cidr } from '../net/addr';
import type { Hcn } from '../hns/hcn';
import { claimsOf, ipamOf } from '../selftest/deps';
import { finishEarlierRuns } from '../selftest/leftovers';
import { namespaceIdOf, newSelftestOwner } from '../selftest/owner';
import { planSelftest, type NetworkChoice, type PlanInput } from '../selftest/plan';
import { REPORT_SCHEMA, REPORT_VERSION, type SelftestReport } from '../selftest/report';
import { runSelftest } from '../selftest/run';
import { summarise } from '../selftest/summary';
import type { Owner } from '../state/records';
import { modeOf } from '../plugin/modes/choose';
import { loadConf } from './operator/conf';
import { OpsContext, OpsError, type OpsWriters } from './operator/context';
import { describeFailure } from './operator/describe-failure';
import { UsageError } from './usage-error';

export interface SelftestIo extends OpsWriters {
  platform: NodeJS.Platform;
  pid: number;
  now: () => number;
}

export const SELFTEST_USAGE = `usage: hcn-cni selftest [--network-of-its-own [--subnet CIDR]] [--report FILE] [options]

Runs the HNS calls the plugin relies on against this host — create, query, attach, detach and delete of a namespace
and an endpoint, the error codes for "not found" and "address in use", ids in either case, the notification
registration, the v1 views — on objects of its own only: a namespace, an endpoint on the configured network with an
address from the configured IPAM (released afterwards), or with --network-of-its-own a NAT network of its own.
They are claimed like a pod's before they are created, so a run killed anywhere leaves nothing the audit, GC or the
next self-test does not remove. Exit 1 when an answer differs from what the plugin relies on.

  --conf FILE               the conflist (default: the first with an hcn-cni plugin in the CNI configuration dir)
  --state-dir DIR           the state directory (default: the configuration's)
  --network-of-its-own      make a NAT network of its own instead of using the configured one
  --subnet CIDR             that network's subnet (default 172.31.250.0/24)
  --report FILE             write every call and HNS's answer as JSON (replay it with "hcn-sim compare FILE")
  --json                    print the report on stdout instead of the summary
  --verbose, -v             log to stderr
`;

const OPTIONS = {
  conf: { type: 'string' },
  'state-dir': { type: 'string' },
  'network-of-its-own': { type: 'boolean' },
  subnet: { type: 'string' },
  report: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseOptions>;

function parseOptions(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, strict: true }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export async function runSelftestCli(argv: string[], io: SelftestIo): Promise<number> {
  let v: Values;
  try {
    v = parseOptions(argv);
    if (v.subnet !== undefined && !v['network-of-its-own'])
      throw new UsageError('--subnet is for --network-of-its-own');
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`hcn-cni selftest: ${e.message}\n\n${SELFTEST_USAGE}`);
    return 2;
  }
  if (v.help) {
    io.out(SELFTEST_USAGE);
    return 0;
  }
  try {
    return await selftest(v, io);
  } catch (e) {
    io.err(
      `hcn-cni selftest: ${describeFailure(e, { platform: io.platform, hcnSim: io.env.HCN_SIM, verbose: !!v.verbose })}\n`,
    );
    return e instanceof OpsError ? e.exitCode : 1;
  }
}

function contextOf(v: Values, io: SelftestIo): OpsContext {
  const loaded = loadConf({
    platform: io.platform,
    ...(v.conf !== undefined ? { file: v.conf } : {}),
    ...(v['state-dir'] !== undefined ? { stateDir: v['state-dir'] } : {}),
  });
  const args = { help: false, json: !!v.json, verbose: !!v.verbose, dryRun: false, clearQuarantine: false };
  const ctx = new OpsContext(io, args, loaded, { platform: io.platform, pid: io.pid, now: io.now });
  if (!ctx.stateDirExists())
    throw new OpsError(
      `the state directory ${ctx.conf.stateDir} does not exist: the self-test claims its objects there, as a pod's ADD ` +
        `does, so that an audit of that directory removes what a killed run leaves. Check --state-dir / --conf ` +
        `(configuration: ${loaded.source}).`,
    );
  return ctx;
}

function networkChoice(v: Values, ctx: OpsContext): NetworkChoice {
  if (v['network-of-its-own']) {
    const cidr = parseIpv4Cidr(v.subnet ?? '172.31.250.0/24');
    if (!cidr || cidr.prefix > 29)
      throw new OpsError(`--subnet must be an IPv4 subnet of at least 8 addresses, not ${v.subnet}`, 2);
    return { kind: 'own', subnet: `${formatIpv4(cidr.network)}/${cidr.prefix}`, gateway: formatIpv4(cidr.network + 1) };
  }
  const none = modeOf(ctx.conf).noSharedNetwork;
  if (none)
    throw new OpsError(
      `the configuration (${ctx.loaded.source}) has no shared network to test on (${none}): use --network-of-its-own`,
    );
  return { kind: 'configured', name: ctx.conf.networkName };
}

/** The configured IPAM as a pod's ADD would run it, for this owner. */
function ipamClientFor(ctx: OpsContext, io: SelftestIo, owner: Owner, netns: string) {
  if (!ctx.conf.ipam) return undefined;
  const cniPath = io.env.CNI_PATH || defaultBinDir(io.platform);
  return createIpamClient({
    conf: ctx.conf,
    env: {
      ...io.env,
      CNI_CONTAINERID: owner.containerId,
      CNI_IFNAME: owner.ifname,
      CNI_NETNS: netns,
      CNI_PATH: cniPath,
    },
    stdin: Buffer.from(JSON.stringify(ctx.conf.raw)),
    path: splitCniPath(cniPath, io.platform),
    platform: io.platform,
  });
}

async function selftest(v: Values, io: SelftestIo): Promise<number> {
  const ctx = contextOf(v, io);
  const network = networkChoice(v, ctx);
  const deps = ctx.deps();
  const hcn = deps.hns.hcn(ctx.conf);
  if (!hcn.capabilities.v2Supported)
    throw new OpsError('this host has no HCN (computenetwork.dll): the self-test exercises the HCN calls only');
  const store = deps.stores.store(ctx.conf, ctx.log);
  const { api } = await ctx.api();
  const finished = await finishEarlierRuns({
    api,
    store,
    os: deps.hns.os(),
    log: ctx.log,
    now: deps.now,
    cniNetwork: ctx.conf.name,
    ...(ctx.conf.ipam ? { releaseFor: (o: Owner) => ipamClientFor(ctx, io, o, '')!.delFor(o) } : {}),
  });
  for (const f of finished) if (!v.json) io.out(`finished what an earlier self-test left: ${f}\n`);
  const owner = newSelftestOwner();
  const input = planInput(owner, network, hcn, !!ctx.conf.ipam);
  const plan = planSelftest(input);
  const ipam = network.kind === 'configured' ? ipamClientFor(ctx, io, owner, input.ids.namespace) : undefined;
  const report = newReport(io, hcn.capabilities, network, owner);
  const write = reportWriter(v.report);
  const outcome = await runSelftest(plan, {
    hns: hcn,
    claims: claimsOf({ plan: { conf: ctx.conf, owner }, deps, log: ctx.log, store }),
    ...(ipam ? { ipam: ipamOf(ipam) } : {}),
    record: (step) => {
      report.steps.push(step);
      write(report);
    },
  });
  finishReport(report, outcome, input, io.now());
  write(report);
  if (v.json) ctx.json(report);
  else io.out(summarise(report));
  return report.passed ? 0 : 1;
}

function planInput(owner: Owner, network: NetworkChoice, hcn: Hcn, ipam: boolean): PlanInput {
  return {
    owner,
    network,
    ids: { namespace: namespaceIdOf(owner), endpoint: newGuid(), endpoint2: newGuid(), network: newGuid() },
    address: network.kind === 'own' ? ownAddress(network.subnet) : ipam ? 'ipam' : 'hns',
    v1: hcn.capabilities.v1Supported,
    notifications: hcn.hasServiceNotifications,
  };
}

/** In a network of its own no pod holds any address: the first after the gateway. */
function ownAddress(subnet: string): { ip: string; prefixLength: number } {
  const cidr = parseIpv4Cidr(subnet)!;
  return { ip: formatIpv4(cidr.network + 2), prefixLength: cidr.prefix };
}

function newReport(
  io: SelftestIo,
  caps: { v1Supported: boolean; v2Supported: boolean; hcsSupported?: boolean; optional?: readonly string[] },
  network: NetworkChoice,
  owner: Owner,
): SelftestReport {
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    startedAt: new Date(io.now()).toISOString(),
    platform: io.platform,
    host: {
      capabilities: {
        v1Supported: caps.v1Supported,
        v2Supported: caps.v2Supported,
        hcsSupported: !!caps.hcsSupported,
        optional: [...(caps.optional ?? [])],
      },
    },
    network: { ...network },
    owner: { containerId: owner.containerId, ifname: owner.ifname },
    address: { from: network.kind === 'own' ? 'fixed' : 'hns' },
    steps: [],
    cleanupProblems: [],
    passed: false,
  };
}

function finishReport(
  report: SelftestReport,
  outcome: Awaited<ReturnType<typeof runSelftest>>,
  input: PlanInput,
  now: number,
): void {
  report.finishedAt = new Date(now).toISOString();
  report.address = {
    from: input.address === 'ipam' ? 'ipam' : typeof input.address === 'object' ? 'fixed' : 'hns',
    ...(outcome.address ? { ip: outcome.address } : {}),
  };
  const found = report.steps.find((s) => s.name === 'network-find-by-name');
  if (found?.answer.ok && Array.isArray(found.answer.value)) report.network.document = found.answer.value[0];
  report.cleanupProblems = outcome.cleanupProblems;
  report.passed = outcome.passed;
}

/** Writes the report as the run goes (a killed run leaves what it had), through a temporary file and a rename. */
function reportWriter(file: string | undefined): (report: SelftestReport) => void {
  if (!file) return () => undefined;
  const target = path.resolve(file);
  return (report) => {
    const tmp = `${target}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(report, null, 2)}\n`);
    fs.renameSync(tmp, target);
  };
}
