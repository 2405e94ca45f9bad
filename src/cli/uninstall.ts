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
import { cniDirsFromConfigs } from '../install/containerd-config';
import { leftovers } from '../install/file-install';
import { pluginFileName, standaloneFileName } from '../install/plan';
import { InstallRefusal } from '../install/refusal';
import { describePlan, planUninstall } from '../install/uninstall-plan';
import { EXTRACTED_ADDON_DIR } from '../hns/native';
import { nextStep } from '../orphans/next-step';
import { gc } from '../plugin/verbs/gc';
import { entryExists } from '../state/safe-read';
import { realFileOps } from './file-ops';
import { containerdConfigFiles, defaultContainerdConfig } from './install';
import { OpsContext, type OpsWriters } from './operator/context';
import { describeFailure } from './operator/describe-failure';
import { judgeNode, nodeNetworks, podsOf, stateDirs, type NodeNetwork, type StateDirView } from './uninstall-node';

export interface UninstallIo extends OpsWriters {
  platform: NodeJS.Platform;
  pid: number;
  now: () => number;
}

export const UNINSTALL_USAGE = `usage: hcn-cni uninstall [--dry-run] [--force] [options]

Removes the shim and the standalone executable that install put in containerd's bin directory, every HNS network and
endpoint that is provably hcn-cni's (named by it and claimed by nothing), and, last, every conflist of the conf
directory that names hcn-cni; never another plugin's network or endpoint, load balancer or policy list. With pods
still attached to any hcn-cni network (any such conflist, any record in the state directories they name) it refuses
and changes nothing, unless --force: then each is DELed as the runtime would (its IP released through its network's
IPAM). A run that fails removes no file, so the next run finds everything it needs. --dry-run prints the plan.

  --containerd-config FILE, --bin-dir DIR, --conf-dir DIR   as for install
  --state-dir DIR           the state directory (default: each conflist's; with no hcn-cni conflist in the conf
                            directory uninstall refuses unless this names it)
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
type InstalledFile = { what: string; path: string };

/** Where install put things (containerd's configuration, or the flags), and the node's hcn-cni networks there. */
function locate(v: Values, io: UninstallIo, dryRun: boolean) {
  const configFile = v['containerd-config'] ?? defaultContainerdConfig(io.platform, io.env);
  const given = v['bin-dir'] !== undefined && v['conf-dir'] !== undefined;
  const found = cniDirsFromConfigs(
    given ? [] : containerdConfigFiles(configFile, io.platform),
    configFile,
    io.platform,
  );
  const binDir = v['bin-dir'] ?? found.binDir;
  const confDir = v['conf-dir'] ?? found.confDir;
  const networks = nodeNetworks(confDir, v['state-dir'], io, dryRun);
  return { binDir, confDir, networks };
}

/**
 * The files to remove that are there: the shim, the standalone executable, the leftovers of earlier installs and the
 * addon extracted beside them, then every conflist that names the plugin (last: src/install/uninstall-plan.ts).
 */
function installedFiles(
  ops: ReturnType<typeof realFileOps>,
  binDir: string,
  networks: readonly NodeNetwork[],
  platform: NodeJS.Platform,
) {
  const files: InstalledFile[] = [];
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
  for (const n of networks) if (n.loaded.file !== undefined) files.push({ what: 'conflist', path: n.loaded.file });
  return files;
}

/**
 * The plugin's GC with no attachment valid and the previous plugins' endpoints left alone: each pod's DEL (detach,
 * delete, confirm gone, release through its IPAM), then the audit's sweep of the orphans. Returns its errors.
 */
async function delEveryPod(ctx: OpsContext, binDir: string, io: UninstallIo) {
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
  try {
    const report = await gc(
      { verb: 'GC', conf: gcConf, path: splitCniPath(cniPath, io.platform), ipam, log: ctx.log },
      ctx.deps(),
      { peers: false },
    );
    return report.errors;
  } catch (e) {
    // GC's own report of what it could not do: each error, one line each.
    const details = (e as { details?: unknown }).details;
    return typeof details === 'string' ? details.split('\n') : [(e as Error).message];
  }
}

/**
 * Removes the files in order; one in use (Windows) is renamed aside. The conflists go only when everything before
 * them went: a conflist never names a plugin uninstall could not remove. Returns what failed.
 */
function removeFiles(files: readonly InstalledFile[], ops: ReturnType<typeof realFileOps>, io: UninstallIo): string[] {
  const errors: string[] = [];
  for (const f of files) {
    if (f.what === 'conflist' && errors.length > 0) break;
    try {
      if (f.what === 'extracted addon') fs.rmSync(f.path, { recursive: true, force: true });
      else ops.unlink(f.path);
    } catch (e) {
      // Windows: a running executable (this one, when run from the bin directory) cannot be deleted, only renamed.
      const aside = `${f.path}.old-${io.now()}`;
      try {
        if (f.what === 'conflist') throw e;
        ops.rename(f.path, aside);
        io.out(`${f.path} is in use: renamed to ${path.basename(aside)}; delete it once it has ended\n`);
      } catch {
        errors.push(`removing ${f.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    }
  }
  return errors;
}

/**
 * The HNS work: each network's GC with its own configuration (its IPAM releases its pods' addresses), then a look at
 * the state directories again — a pod ADDed meanwhile (its conflist was still there) keeps the plugin — and at HNS:
 * an object of ours still there keeps it too. Returns errors.
 */
async function delEveryNetwork(views: readonly StateDirView[], binDir: string, io: UninstallIo): Promise<string[]> {
  const errors: string[] = [];
  for (const v of views.filter((x) => x.store))
    for (const n of v.networks) errors.push(...(await delEveryPod(n.ctx, binDir, io)));
  if (errors.length > 0) return errors;
  const left = podsOf(stateDirs(views.flatMap((v) => v.networks)));
  if (left.length > 0)
    errors.push(`${left.length} pod(s) still attached after their DEL (${left.map((p) => p.key).join(', ')})`);
  if (errors.length > 0) return errors;
  // What of ours the DELs and the sweep had to leave (a network holding another plugin's endpoint, which its delete
  // would take with it): with the plugin gone no audit would ever remove it, so the files stay until it is gone.
  for (const j of (await judgeNode(views)).filter((x) => x.verdict !== 'foreign'))
    errors.push(`${j.kind} ${j.name} (${j.id}) is still there: ${j.reason}; ${nextStep(j) ?? 'run uninstall again'}`);
  return errors;
}

/** The plan printed, then (unless a dry run) carried out; an InstallRefusal says why it stopped. */
async function uninstall(v: Values, io: UninstallIo): Promise<number> {
  const dryRun = v['dry-run'] ?? false;
  const { binDir, confDir, networks } = locate(v, io, dryRun);
  const ops = realFileOps();
  const files = installedFiles(ops, binDir, networks, io.platform);
  const views = stateDirs(networks);
  const judged = await judgeNode(views);
  const names = networks.map((n) => n.ctx.conf.name);
  const plan = planUninstall({ judged, pods: podsOf(views), networks: names, files, force: v.force ?? false });
  const prefix = dryRun ? '(dry run) ' : '';
  for (const n of networks) io.out(`conflist ${n.loaded.source}; state ${n.ctx.conf.stateDir}\n`);
  io.out(`bin ${binDir}; conf ${confDir}\n`);
  for (const l of describePlan(plan)) io.out(`${prefix}${l}\n`);
  if (plan.refusal) throw new InstallRefusal(plan.refusal);
  if (dryRun) {
    io.out('(dry run) nothing changed\n');
    return 0;
  }
  const errors: string[] = [];
  if (plan.delPods.length > 0 || plan.deleteObjects.length > 0)
    errors.push(...(await delEveryNetwork(views, binDir, io)));
  // Files only once HNS is done: a failed run leaves the plugin and the conflists (each network's IPAM) for the next.
  if (errors.length === 0) errors.push(...removeFiles(plan.files, ops, io));
  for (const e of errors) io.out(`ERROR ${e}\n`);
  if (errors.length > 0)
    throw new InstallRefusal(
      `uninstall stopped with ${errors.length} error(s) (see above); what it did not remove is still in place — run it again once the cause is gone`,
    );
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
