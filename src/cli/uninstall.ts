/**
 * `hcn-cni uninstall [--dry-run] [--force]`: removes what install put on this node and every HNS object that is
 * provably hcn-cni's (src/install/uninstall-plan.ts says what and why), releasing the pods' IPs through their IPAM.
 * The plan is printed first — the dry run prints it and stops — then carried out. Loaded only for this verb.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { parseNetConf } from '../cni/config';
import { splitCniPath } from '../cni/env';
import { createIpamClient } from '../cni/ipam';
import { cniDirsFromConfig } from '../install/containerd-config';
import { leftovers } from '../install/file-install';
import { CONFLIST_NAME, pluginFileName, standaloneFileName } from '../install/plan';
import { InstallRefusal } from '../install/refusal';
import { describePlan, planUninstall, type PodAttachment } from '../install/uninstall-plan';
import { audit, graceMs } from '../orphans/audit';
import { EXTRACTED_ADDON_DIR } from '../hns/native';
import { gc } from '../plugin/verbs/gc';
import { ownerKey } from '../state/records';
import { entryExists } from '../state/safe-read';
import { realFileOps } from './file-ops';
import { defaultContainerdConfig } from './install';
import { loadConf } from './operator/conf';
import { OpsContext, type OpsWriters } from './operator/context';
import { describeFailure } from './operator/describe-failure';

export interface UninstallIo extends OpsWriters {
  platform: NodeJS.Platform;
  pid: number;
  now: () => number;
}

export const UNINSTALL_USAGE = `usage: hcn-cni uninstall [--dry-run] [--force] [options]

Removes the conflist, the shim and the standalone executable that install put in containerd's directories, and every
HNS network and endpoint that is provably hcn-cni's (named by it and claimed by nothing); never another plugin's
network or endpoint, load balancer or policy list. With pods still attached it refuses and changes nothing, unless
--force: then each is DELed as the runtime would (its IP released through its IPAM). --dry-run prints the plan.

  --containerd-config FILE, --bin-dir DIR, --conf-dir DIR   as for install
  --state-dir DIR           the state directory (default: the installed conflist's)
  --force                   DEL the pods still attached
  --dry-run                 print what would be done, do nothing
`;

const OPTIONS = {
  'containerd-config': { type: 'string' },
  'bin-dir': { type: 'string' },
  'conf-dir': { type: 'string' },
  'state-dir': { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parse>['values'];
type Judged = Awaited<ReturnType<typeof audit>>['plan']['judged'];
type InstalledFile = { what: string; path: string };

/** Where install put things (containerd's configuration, or the flags), and the configuration found there. */
function locate(v: Values, io: UninstallIo, dryRun: boolean) {
  const configFile = v['containerd-config'] ?? defaultContainerdConfig(io.platform, io.env);
  let text: string | undefined;
  try {
    text = fs.readFileSync(configFile, 'utf8');
  } catch {
    text = undefined;
  }
  const found = cniDirsFromConfig(text, configFile, io.platform);
  const binDir = v['bin-dir'] ?? found.binDir;
  const confDir = v['conf-dir'] ?? found.confDir;
  const conflist = path.join(confDir, CONFLIST_NAME);
  const loaded = loadConf({
    platform: io.platform,
    ...(entryExists(conflist) ? { file: conflist } : { confDir }),
    ...(v['state-dir'] !== undefined ? { stateDir: v['state-dir'] } : {}),
  });
  const ctx = new OpsContext(io, { help: false, json: false, verbose: false, dryRun, clearQuarantine: false }, loaded, {
    platform: io.platform,
    pid: io.pid,
    now: io.now,
  });
  return { binDir, confDir, conflist, loaded, ctx };
}

/** The files install put there that are still there, with the leftovers of earlier installs. */
function installedFiles(
  ops: ReturnType<typeof realFileOps>,
  binDir: string,
  conflist: string,
  platform: NodeJS.Platform,
) {
  const files: InstalledFile[] = [];
  if (entryExists(conflist)) files.push({ what: 'conflist', path: conflist });
  for (const [what, name] of [
    ['shim', pluginFileName(platform)],
    ['standalone executable', standaloneFileName(platform)],
  ] as const) {
    const f = path.join(binDir, name);
    if (entryExists(f)) files.push({ what, path: f });
    for (const l of leftovers(ops, f)) files.push({ what: 'leftover', path: l });
  }
  // The addon the packaged executable extracted beside itself when it ran from the bin directory.
  for (const name of entryExists(binDir) ? fs.readdirSync(binDir) : [])
    if (EXTRACTED_ADDON_DIR.test(name)) files.push({ what: 'extracted addon', path: path.join(binDir, name) });
  return files;
}

/** What HNS and the state say now: the audit's judgement without deleting anything. */
async function judgeNode(ctx: OpsContext) {
  const { api } = await ctx.api();
  const rt = ctx.rt();
  const store = ctx.stateDirExists() ? rt.store(ctx.conf, ctx.log) : undefined;
  const state = store?.snapshot();
  let judged: Judged;
  if (store) {
    const report = await audit({
      api,
      store,
      os: rt.os(),
      log: ctx.log,
      now: rt.now,
      dryRun: true,
      graceMs: graceMs(ctx.conf.hnsTimeoutSeconds),
      adopt: [],
    });
    judged = report.plan.judged;
  } else {
    const [networks, endpoints] = await Promise.all([api.listNetworks(), api.listEndpoints()]);
    judged = [...networks, ...endpoints].map(
      (o) =>
        ({
          kind: 'networkId' in o ? 'endpoint' : 'network',
          id: o.id,
          name: o.name,
          verdict: 'foreign',
          reason: 'no state directory',
        }) as never,
    );
  }
  return { rt, store, state, judged };
}

/** The pods of this configuration's network the state records. */
function podsOf(ctx: OpsContext, state: Awaited<ReturnType<typeof judgeNode>>['state']): PodAttachment[] {
  const ours = (r: { cniNetwork?: string }) => r.cniNetwork === undefined || r.cniNetwork === ctx.conf.name;
  return (state?.attachments ?? []).filter(ours).map((r) => ({
    key: ownerKey(r),
    endpoint: { id: r.endpoint.id, name: r.endpoint.name },
    addresses: ((r.result as { ips?: Array<{ address?: string }> }).ips ?? []).map((x) => String(x.address)),
    ...(r.ipamAllocated && ctx.conf.ipam?.type ? { ipam: ctx.conf.ipam.type } : {}),
  }));
}

/**
 * The plugin's GC with no attachment valid and the previous plugins' endpoints left alone: each pod's DEL (detach,
 * delete, confirm gone, release through its IPAM), then the audit's sweep of the orphans. Returns its errors.
 */
async function delEveryPod(ctx: OpsContext, rt: ReturnType<OpsContext['rt']>, binDir: string, io: UninstallIo) {
  const raw = {
    ...ctx.conf.raw,
    cniVersion: ctx.conf.cniVersion,
    name: ctx.conf.name,
    'cni.dev/valid-attachments': [],
  };
  const gcConf = parseNetConf(raw, {
    platform: io.platform,
    defaults: { stateDir: ctx.conf.stateDir },
    verb: 'GC',
  });
  gcConf.stateDir = ctx.conf.stateDir;
  // The plan was judged without any peer adoption (only hcn-cni's names): the sweep must judge the same.
  gcConf.adopt = [];
  const cniPath = io.env.CNI_PATH || binDir;
  const ipam = createIpamClient({
    conf: gcConf,
    env: { ...io.env, CNI_PATH: cniPath },
    stdin: Buffer.from(JSON.stringify({ ...raw, cniVersion: '1.1.0' })),
    path: splitCniPath(cniPath, io.platform),
    platform: io.platform,
  });
  const report = await gc(
    { verb: 'GC', conf: gcConf, path: splitCniPath(cniPath, io.platform), ipam, log: ctx.log },
    rt,
    { peers: false },
  );
  return report.errors;
}

/** Removes the files other than the conflist; one in use (Windows) is renamed aside. Returns what failed. */
function removeFiles(files: readonly InstalledFile[], ops: ReturnType<typeof realFileOps>, io: UninstallIo): string[] {
  const errors: string[] = [];
  for (const f of files.filter((x) => x.what !== 'conflist')) {
    try {
      if (f.what === 'extracted addon') fs.rmSync(f.path, { recursive: true, force: true });
      else ops.unlink(f.path);
    } catch (e) {
      // Windows: a running executable (this one, when run from the bin directory) cannot be deleted, only renamed.
      const aside = `${f.path}.old-${io.now()}`;
      try {
        ops.rename(f.path, aside);
        io.out(`${f.path} is in use: renamed to ${path.basename(aside)}; delete it once it has ended\n`);
      } catch {
        errors.push(`removing ${f.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    }
  }
  return errors;
}

/** The plan printed, then (unless a dry run) carried out; an InstallRefusal says why it stopped. */
async function uninstall(v: Values, io: UninstallIo): Promise<number> {
  const dryRun = v['dry-run'] ?? false;
  const { binDir, confDir, conflist, loaded, ctx } = locate(v, io, dryRun);
  const ops = realFileOps();
  const files = installedFiles(ops, binDir, conflist, io.platform);
  const { rt, store, state, judged } = await judgeNode(ctx);
  const plan = planUninstall({ judged, pods: podsOf(ctx, state), files, force: v.force ?? false });
  const prefix = dryRun ? '(dry run) ' : '';
  io.out(`conflist ${loaded.source}; state ${ctx.conf.stateDir}; bin ${binDir}; conf ${confDir}\n`);
  for (const l of describePlan(plan)) io.out(`${prefix}${l}\n`);
  if (plan.refusal) throw new InstallRefusal(plan.refusal);
  if (dryRun) {
    io.out('(dry run) nothing changed\n');
    return 0;
  }
  // The conflist first: containerd stops choosing hcn-cni for new pods.
  const conf = plan.files.find((f) => f.what === 'conflist');
  if (conf) ops.unlink(conf.path);
  const errors: string[] = [];
  if (store && (plan.delPods.length > 0 || plan.deleteObjects.length > 0))
    errors.push(...(await delEveryPod(ctx, rt, binDir, io)));
  errors.push(...removeFiles(plan.files, ops, io));
  for (const e of errors) io.out(`ERROR ${e}\n`);
  if (errors.length > 0) throw new InstallRefusal(`uninstall finished with ${errors.length} error(s) (see above)`);
  io.out('done\n');
  return 0;
}

export async function runUninstall(argv: string[], io: UninstallIo): Promise<number> {
  let v: Values;
  try {
    v = parse(argv).values;
  } catch (e) {
    io.err(`hcn-cni uninstall: ${(e as Error).message}\nrun "hcn-cni uninstall --help" for the options\n`);
    return 2;
  }
  if (v.help) {
    io.out(UNINSTALL_USAGE);
    return 0;
  }
  try {
    return await uninstall(v, io);
  } catch (e) {
    if (e instanceof InstallRefusal) {
      io.err(`hcn-cni uninstall: ${e.message}\n`);
      return 1;
    }
    io.err(
      `hcn-cni uninstall: ${describeFailure(e, { platform: io.platform, hcnSim: io.env.HCN_SIM, verbose: false })}\n`,
    );
    return 1;
  }
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true });
}
