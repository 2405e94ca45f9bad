/**
 * `hcn-cni install`: puts hcn-cni on this node for containerd — the directories from containerd's config.toml (or
 * flags), the standalone executable and the shim (service mode) or the executable alone (standalone mode), and the
 * conflist with the node's pod CIDR and the cniVersion that containerd accepts. Idempotent: what is already in place
 * is left as it is. Each refusal is one line on stderr, exit 1; a usage error exit 2. The logic is in src/install
 * (pure, tested in-process); this file reads the process's files, flags and environment. Loaded only for this verb.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { cniDirsFromConfigs, type CniDirs, type ConfigFile } from '../install/containerd-config';
import { loadContainerdConfig } from '../install/containerd-imports';
import { needsPodCidr, renderConflist } from '../install/conflist';
import { readNodePodCidrs } from '../install/node-pod-cidr';
import {
  applyInstall,
  CONFLIST_NAME,
  describeOutcome,
  planInstall,
  pluginFileName,
  type InstallMode,
} from '../install/plan';
import { InstallRefusal } from '../install/refusal';
import { shadowWarning, sortsBefore } from '../install/conf-order';
import { defaultStateDir } from '../cni/defaults';
import { realFileOps, dryRunFileOps } from './file-ops';

export interface InstallIo {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** The running executable (the standalone one) when it is the packaged single executable. */
  selfExecutable?: string;
  out: (s: string) => void;
  err: (s: string) => void;
}

export const INSTALL_USAGE = `usage: hcn-cni install [options]

Puts hcn-cni where containerd looks: the standalone executable and the shim (service mode, the default) or the
executable alone (--mode standalone) in containerd's CNI bin directory, and the conflist in its conf directory.
Directories come from containerd's config.toml (version 3: [plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs /
bin_dir, conf_dir; version 2: [plugins."io.containerd.grpc.v1.cri".cni] bin_dir, conf_dir), else containerd's defaults.

  --containerd-config FILE   containerd's config.toml (default %ProgramFiles%\\containerd\\config.toml on Windows,
                             /etc/containerd/config.toml elsewhere; a missing file means containerd's defaults)
  --bin-dir DIR, --conf-dir DIR
                             use these instead of what config.toml says
  --conflist FILE            the conflist template; "__POD_SUBNET__" in it is replaced by the node's pod CIDR(s)
  --pod-cidr CIDR            the node's pod CIDR (repeat for dual-stack; or POD_SUBNET, comma-separated);
                             default: spec.podCIDRs of the node,
                             read from the Kubernetes API with the pod's service account
  --node NAME                the node (default NODE_NAME)
  --api-server URL           the API server (default API_SERVER, else https://KUBERNETES_SERVICE_HOST:PORT)
  --service-account DIR      token and ca.crt (default <CONTAINER_SANDBOX_MOUNT_POINT>/var/run/secrets/kubernetes.io/serviceaccount)
  --cni-version V            the conflist's cniVersion (default: 1.1.0 for a version 3 config, containerd 2.x;
                             else 1.0.0, which containerd 1.7 and 2.x both accept)
  --mode service|standalone  default service
  --executable FILE          the standalone executable to install (default: this executable)
  --shim FILE                the shim to install (default: hcn-cni-shim(.exe) beside --executable)
  --dry-run                  say what would be done, do nothing
`;

const OPTIONS = {
  'containerd-config': { type: 'string' },
  'bin-dir': { type: 'string' },
  'conf-dir': { type: 'string' },
  conflist: { type: 'string' },
  'pod-cidr': { type: 'string', multiple: true },
  node: { type: 'string' },
  'api-server': { type: 'string' },
  'service-account': { type: 'string' },
  'cni-version': { type: 'string' },
  mode: { type: 'string' },
  executable: { type: 'string' },
  shim: { type: 'string' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readOptional(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InstallRefusal(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function readRequired(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new InstallRefusal(
      `cannot read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** containerd's configuration files: config.toml and the files it imports, as containerd reads them. */
export function containerdConfigFiles(configFile: string, platform: NodeJS.Platform): ConfigFile[] {
  return loadContainerdConfig(configFile, platform, {
    read: (f) => fs.readFileSync(f, 'utf8'),
    list: (d) => fs.readdirSync(d),
  });
}

export function defaultContainerdConfig(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string {
  return platform === 'win32'
    ? path.win32.join(env.ProgramFiles || 'C:\\Program Files', 'containerd', 'config.toml')
    : '/etc/containerd/config.toml';
}

async function podCidrs(v: { [k: string]: unknown }, io: InstallIo): Promise<string[]> {
  const node = (v.node as string | undefined) ?? io.env.NODE_NAME;
  if (!node)
    throw new InstallRefusal('the conflist needs the pod CIDR: give --pod-cidr, or --node (NODE_NAME) to read it');
  const host = io.env.KUBERNETES_SERVICE_HOST;
  const server =
    (v['api-server'] as string | undefined) ??
    (io.env.API_SERVER ||
      (host ? `https://${host.includes(':') ? `[${host}]` : host}:${io.env.KUBERNETES_SERVICE_PORT || '443'}` : ''));
  if (!server)
    throw new InstallRefusal(
      'the conflist needs the pod CIDR: give --pod-cidr, or --api-server (no KUBERNETES_SERVICE_HOST)',
    );
  const sa =
    (v['service-account'] as string | undefined) ??
    path.join(io.env.CONTAINER_SANDBOX_MOUNT_POINT ?? '/', 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
  const token = readOptional(path.join(sa, 'token'));
  if (token === undefined)
    throw new InstallRefusal(`no service account token in ${sa}; give --pod-cidr or --service-account`);
  const ca = readOptional(path.join(sa, 'ca.crt'));
  return readNodePodCidrs({
    server,
    node,
    token: token.trim(),
    ...(ca !== undefined ? { ca } : {}),
    timeoutMs: 15_000,
  });
}

type Values = ReturnType<typeof parse>['values'];

/** containerd's CNI directories (from its configuration, or the flags), said with where each came from. */
function locateDirs(v: Values, io: InstallIo): { found: CniDirs; binDir: string; confDir: string } {
  const configFile = v['containerd-config'] ?? defaultContainerdConfig(io.platform, io.env);
  const found: CniDirs = cniDirsFromConfigs(
    v['bin-dir'] !== undefined && v['conf-dir'] !== undefined ? [] : containerdConfigFiles(configFile, io.platform),
    configFile,
    io.platform,
  );
  const binDir = v['bin-dir'] ?? found.binDir;
  const confDir = v['conf-dir'] ?? found.confDir;
  io.out(`bin directory ${binDir} (${v['bin-dir'] !== undefined ? '--bin-dir' : found.from.binDir})\n`);
  io.out(`conf directory ${confDir} (${v['conf-dir'] !== undefined ? '--conf-dir' : found.from.confDir})\n`);
  return { found, binDir, confDir };
}

/** The executable to install and, in service mode, the shim beside it (or the given one). */
function readExecutables(v: Values, io: InstallIo, mode: InstallMode): { executable: Buffer; shim?: Buffer } {
  const executableFile = v.executable ?? io.selfExecutable;
  if (!executableFile)
    throw new InstallRefusal('this is not the packaged executable: give the one to install with --executable');
  const executable = readRequired(executableFile, 'executable');
  const shimFile =
    v.shim ?? path.join(path.dirname(executableFile), io.platform === 'win32' ? 'hcn-cni-shim.exe' : 'hcn-cni-shim');
  const shim = mode === 'service' ? readRequired(shimFile, 'shim') : undefined;
  return { executable, ...(shim ? { shim } : {}) };
}

/** --conflist TEMPLATE rendered for this node: its pod CIDRs (given, or the node's) and a cniVersion containerd takes. */
async function conflistFor(v: Values, io: InstallIo, found: CniDirs): Promise<string | undefined> {
  if (v.conflist === undefined) return undefined;
  const template = readRequired(v.conflist, 'conflist').toString('utf8');
  const fromEnv = io.env.POD_SUBNET ? io.env.POD_SUBNET.split(',').map((c) => c.trim()) : undefined;
  const given = v['pod-cidr'] ?? fromEnv;
  const cidrs = given ?? (needsPodCidr(template) ? await podCidrs(v, io) : undefined);
  const cniVersion = v['cni-version'] ?? found.cniVersion;
  const conflist = renderConflist(template, {
    source: v.conflist,
    ...(cidrs ? { podCidrs: cidrs } : {}),
    cniVersion,
    platform: io.platform,
    stateDir: defaultStateDir(io.platform),
  });
  if (cidrs) io.out(`pod CIDR ${cidrs.join(', ')}${v['pod-cidr'] ? ' (--pod-cidr)' : ' (the node, from the API)'}\n`);
  io.out(
    `cniVersion ${cniVersion} (${v['cni-version'] ? '--cni-version' : found.form === 'v3' ? 'a version 3 config: containerd 2.x' : 'what containerd 1.7 and 2.x both accept'})\n`,
  );
  return conflist;
}

/** Another configuration containerd would run first (src/install/conf-order.ts): said, not changed. */
function warnIfShadowed(confDir: string, io: InstallIo): void {
  let entries: Array<{ name: string; dir: boolean }>;
  try {
    entries = fs.readdirSync(confDir, { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    return; // a dry run's directory not made yet: nothing there to sort first
  }
  const warning = shadowWarning(confDir, sortsBefore(entries));
  if (warning) io.err(`hcn-cni install: ${warning}\n`);
}

async function install(v: Values, io: InstallIo, mode: InstallMode): Promise<number> {
  const { found, binDir, confDir } = locateDirs(v, io);
  const { executable, shim } = readExecutables(v, io, mode);
  const conflist = await conflistFor(v, io, found);
  const steps = planInstall({
    platform: io.platform,
    dirs: { binDir, confDir },
    mode,
    executable,
    ...(shim ? { shim } : {}),
    ...(conflist !== undefined ? { conflist } : {}),
  });
  const ops = v['dry-run'] ? dryRunFileOps() : realFileOps();
  const stamp = `${Date.now()}-${process.pid}`;
  for (const o of applyInstall(ops, steps, stamp)) io.out(`${v['dry-run'] ? '(dry run) ' : ''}${describeOutcome(o)}\n`);
  if (conflist !== undefined) warnIfShadowed(confDir, io);
  io.out(
    `${v['dry-run'] ? '(dry run) nothing changed' : 'done'}: containerd runs ${path.join(binDir, pluginFileName(io.platform))}${mode === 'service' ? ' (the shim; start the service with hcn-cni-standalone serve)' : ''}\n`,
  );
  return 0;
}

export async function runInstall(argv: string[], io: InstallIo): Promise<number> {
  let v: Values;
  try {
    v = parse(argv).values;
  } catch (e) {
    io.err(`hcn-cni install: ${(e as Error).message}\nrun "hcn-cni install --help" for the options\n`);
    return 2;
  }
  if (v.help) {
    io.out(INSTALL_USAGE);
    return 0;
  }
  const mode = (v.mode ?? 'service') as InstallMode;
  if (mode !== 'service' && mode !== 'standalone') {
    io.err(`hcn-cni install: --mode is service or standalone, not ${JSON.stringify(v.mode)}\n`);
    return 2;
  }
  try {
    return await install(v, io, mode);
  } catch (e) {
    if (e instanceof InstallRefusal) {
      io.err(`hcn-cni install: ${e.message}\n`);
      return 1;
    }
    // What the file system refused that no step named: still one line (its code and path), not a stack trace.
    if (typeof (e as NodeJS.ErrnoException).code === 'string' && (e as NodeJS.ErrnoException).syscall) {
      io.err(`hcn-cni install: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  }
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true });
}

/** Where install put the conflist, found as install finds it (containerd's config.toml at its default place). */
export function installedConflistPath(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string {
  return path.join(installedCniDirs(platform, env).confDir, CONFLIST_NAME);
}

/** containerd's CNI configuration and bin directories, found as `hcn-cni install` finds them. */
export function installedCniDirs(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
): { confDir: string; binDirs: string[] } {
  const configFile = defaultContainerdConfig(platform, env);
  const dirs = cniDirsFromConfigs(containerdConfigFiles(configFile, platform), configFile, platform);
  return { confDir: dirs.confDir, binDirs: dirs.binDirs };
}
