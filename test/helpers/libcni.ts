/**
 * A runtime that drives plugins the way containerd does through libcni (containernetworking/cni libcni/api.go and
 * libcni/conf.go), for tests: configuration lists loaded from files, per-plugin stdin built by injecting name,
 * cniVersion, prevResult and the capability arguments the plugin declares (runtimeConfig), CNI_ARGS as "K=V;K=V", the
 * result cache that supplies prevResult to CHECK and DEL, chains run forward on ADD and CHECK and backward on DEL, GC
 * that first DELs every cached attachment not in the valid list and then (1.1.0+) sends GC with
 * cni.dev/valid-attachments only when the runtime gave arguments, STATUS from 1.1.0. On Windows containerd passes the
 * HCN namespace GUID as the netns, unchanged; so does this harness (stock cnitool cannot: it makes the netns a path).
 *
 * Plugins are found by `type` on CNI_PATH and executed; `inProcess` lets a test run a plugin through its in-process
 * entry instead (hcn-cni through runCni, the same dispatcher the executable runs) while its own delegated IPAM and
 * every other plugin of a chain are still real executables.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export interface NetworkConfigList {
  name: string;
  /** "" when neither the file nor a wrapped .conf names one (libcni then injects "" and skel reads it as 0.1.0). */
  cniVersion: string;
  disableCheck: boolean;
  disableGC: boolean;
  plugins: Array<Record<string, unknown>>;
}

/** What the runtime knows about one attachment (libcni RuntimeConf). */
export interface RuntimeConf {
  containerId: string;
  /** A namespace GUID on Windows containerd; passed through unchanged. */
  netns: string;
  ifname: string;
  args?: Array<[string, string]>;
  capabilityArgs?: Record<string, unknown>;
}

export interface PluginRun {
  stdout: string;
  exitCode: number;
}

export type PluginExec = (type: string, env: Record<string, string>, stdin: Buffer) => Promise<PluginRun>;

/** A plugin's error answer, as libcni surfaces it. */
export class PluginError extends Error {
  constructor(
    readonly verb: string,
    readonly type: string,
    readonly code: number,
    readonly msg: string,
    readonly details?: string,
  ) {
    super(
      `plugin type="${type}" failed (${verb.toLowerCase()}): ${msg}${details ? `; ${details}` : ''} (code ${code})`,
    );
  }
}

/** libcni/conf.go NetworkConfFromBytes (a .conflist), or ConfFromBytes + ConfListFromConf (a single .conf). */
export function loadConfList(file: string): NetworkConfigList {
  const text = fs.readFileSync(file, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(
      `error parsing configuration${file.endsWith('.conflist') ? ' list' : ''}: ${(e as Error).message}`,
      { cause: e },
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error('error parsing configuration: not an object');
  const obj = raw as Record<string, unknown>;
  if (!file.endsWith('.conflist')) {
    if (typeof obj.type !== 'string' || obj.type === '') throw new Error("error parsing configuration: missing 'type'");
    return {
      name: String(obj.name ?? ''),
      cniVersion: typeof obj.cniVersion === 'string' ? obj.cniVersion : '',
      disableCheck: false,
      disableGC: false,
      plugins: [obj],
    };
  }
  if (typeof obj.name !== 'string') throw new Error('error parsing configuration list: no name');
  const plugins = obj.plugins;
  if (!Array.isArray(plugins) || plugins.length === 0)
    throw new Error('error parsing configuration list: no plugins in list');
  return {
    name: obj.name,
    cniVersion: typeof obj.cniVersion === 'string' ? obj.cniVersion : '',
    disableCheck: obj.disableCheck === true || obj.disableCheck === 'true',
    disableGC: obj.disableGC === true || obj.disableGC === 'true',
    plugins: plugins as Array<Record<string, unknown>>,
  };
}

function versionAtLeast(v: string, min: string): boolean {
  const p = (s: string) => (s === '' ? [0, 1, 0] : s.split('.').map(Number));
  const [a, b] = [p(v), p(min)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
}

/** Runs executables found on `dirs` (libcni invoke.FindInPath), with only the CNI environment plus PATH and extra. */
export function execOnPath(dirs: string[], extraEnv: Record<string, string> = {}): PluginExec {
  return (type, env, stdin) => {
    const file = dirs.map((d) => path.join(d, type)).find((f) => fs.existsSync(f));
    if (!file) return Promise.reject(new Error(`failed to find plugin "${type}" in path [${dirs.join(' ')}]`));
    return new Promise((resolve, reject) => {
      const child = spawn(file, [], {
        env: { PATH: process.env.PATH ?? '', ...extraEnv, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.resume();
      child.on('error', reject);
      child.on('close', (code) => resolve({ stdout, exitCode: code ?? -1 }));
      child.stdin.end(stdin);
    });
  };
}

interface CachedAttachment {
  kind: 'cniCacheV1';
  containerId: string;
  config: string;
  ifName: string;
  networkName: string;
  netns?: string;
  cniArgs?: Array<[string, string]>;
  capabilityArgs?: Record<string, unknown>;
  result?: Record<string, unknown>;
}

export class Libcni {
  /** Every plugin invocation, in order: verb, type and the stdin it got (for assertions on what libcni sent). */
  readonly calls: Array<{ verb: string; type: string; env: Record<string, string>; stdin: Record<string, unknown> }> =
    [];

  constructor(
    private readonly opts: {
      path: string[];
      cacheDir: string;
      exec: PluginExec;
      inProcess?: Record<string, PluginExec>;
    },
  ) {}

  async add(list: NetworkConfigList, rt: RuntimeConf): Promise<Record<string, unknown>> {
    let prev: Record<string, unknown> | undefined;
    for (const plugin of list.plugins) {
      const out = await this.run('ADD', list, plugin, rt, prev);
      prev = JSON.parse(out) as Record<string, unknown>;
    }
    this.cacheWrite(list, rt, prev);
    return prev!;
  }

  async check(list: NetworkConfigList, rt: RuntimeConf): Promise<void> {
    if (!versionAtLeast(list.cniVersion, '0.4.0'))
      throw new Error(`configuration version "${list.cniVersion}" does not support the CHECK command`);
    if (list.disableCheck) return;
    const cached = this.cacheRead(list.name, rt);
    if (!cached?.result) throw new Error(`failed to get network "${list.name}" cached result: no cached result`);
    for (const plugin of list.plugins) await this.run('CHECK', list, plugin, rt, cached.result);
  }

  async del(list: NetworkConfigList, rt: RuntimeConf): Promise<void> {
    // The cached result is DEL's prevResult from 0.4.0 on (libcni DelNetworkList); a second DEL finds none.
    const prev = versionAtLeast(list.cniVersion, '0.4.0') ? this.cacheRead(list.name, rt)?.result : undefined;
    for (const plugin of [...list.plugins].reverse()) await this.run('DEL', list, plugin, rt, prev);
    this.cacheDelete(list.name, rt);
  }

  /** libcni GCNetworkList: args undefined is a runtime that passes no GC arguments. */
  async gc(
    list: NetworkConfigList,
    args?: { validAttachments: Array<{ containerID: string; ifname: string }> },
  ): Promise<void> {
    if (list.disableGC) return;
    const valid = new Set((args?.validAttachments ?? []).map((a) => `${a.containerID}/${a.ifname}`));
    const errors: string[] = [];
    for (const c of this.cachedAttachments()) {
      if (c.networkName !== list.name || valid.has(`${c.containerId}/${c.ifName}`)) continue;
      const rt: RuntimeConf = {
        containerId: c.containerId,
        netns: c.netns ?? '',
        ifname: c.ifName,
        ...(c.cniArgs ? { args: c.cniArgs } : {}),
        ...(c.capabilityArgs ? { capabilityArgs: c.capabilityArgs } : {}),
      };
      try {
        await this.del(list, rt);
      } catch (e) {
        errors.push(`failed to delete stale attachment ${c.containerId} ${c.ifName}: ${(e as Error).message}`);
      }
    }
    if (versionAtLeast(list.cniVersion, '1.1.0')) {
      const inject: Record<string, unknown> = {};
      if (args) {
        inject['cni.dev/valid-attachments'] = args.validAttachments;
        inject['cni.dev/attachments'] = args.validAttachments; // containernetworking/cni #1101: libcni sends both
      }
      for (const plugin of list.plugins) {
        try {
          await this.run('GC', list, plugin, undefined, undefined, inject);
        } catch (e) {
          errors.push((e as Error).message);
        }
      }
    }
    if (errors.length) throw new Error(errors.join('\n'));
  }

  async status(list: NetworkConfigList): Promise<void> {
    if (!versionAtLeast(list.cniVersion, '1.1.0')) return;
    for (const plugin of list.plugins) await this.run('STATUS', list, plugin, undefined, undefined);
  }

  cachedAttachments(): CachedAttachment[] {
    const dir = path.join(this.opts.cacheDir, 'results');
    if (!fs.existsSync(dir)) return [];
    return fs.readdirSync(dir).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CachedAttachment);
  }

  /** buildOneConfig + injectRuntimeConfig, then the exec with libcni's environment (invoke.Args). */
  private async run(
    verb: string,
    list: NetworkConfigList,
    plugin: Record<string, unknown>,
    rt: RuntimeConf | undefined,
    prevResult: Record<string, unknown> | undefined,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const conf: Record<string, unknown> = { ...plugin, name: list.name, cniVersion: list.cniVersion, ...extra };
    if (prevResult) conf.prevResult = prevResult;
    if (rt) {
      const caps = (plugin.capabilities ?? {}) as Record<string, unknown>;
      const rc: Record<string, unknown> = {};
      for (const [cap, on] of Object.entries(caps))
        if (on === true && rt.capabilityArgs && cap in rt.capabilityArgs) rc[cap] = rt.capabilityArgs[cap];
      if (Object.keys(rc).length > 0) conf.runtimeConfig = rc;
    }
    const env: Record<string, string> = { CNI_COMMAND: verb, CNI_PATH: this.opts.path.join(path.delimiter) };
    if (rt) {
      env.CNI_CONTAINERID = rt.containerId;
      env.CNI_NETNS = rt.netns;
      env.CNI_IFNAME = rt.ifname;
      if (rt.args?.length) env.CNI_ARGS = rt.args.map(([k, v]) => `${k}=${v}`).join(';');
    }
    const type = String(plugin.type);
    this.calls.push({ verb, type, env, stdin: conf });
    const exec = this.opts.inProcess?.[type] ?? this.opts.exec;
    const out = await exec(type, env, Buffer.from(JSON.stringify(conf)));
    if (out.exitCode !== 0) {
      let e: { code?: number; msg?: string; details?: string } = {};
      try {
        e = JSON.parse(out.stdout) as typeof e;
      } catch {
        e = { code: 999, msg: `netplugin failed: ${JSON.stringify(out.stdout)}` };
      }
      throw new PluginError(verb, type, Number(e.code ?? 999), String(e.msg ?? ''), e.details);
    }
    return out.stdout;
  }

  private cacheFile(network: string, rt: Pick<RuntimeConf, 'containerId' | 'ifname'>): string {
    return path.join(this.opts.cacheDir, 'results', `${network}-${rt.containerId}-${rt.ifname}`);
  }

  private cacheWrite(list: NetworkConfigList, rt: RuntimeConf, result: Record<string, unknown> | undefined): void {
    const entry: CachedAttachment = {
      kind: 'cniCacheV1',
      containerId: rt.containerId,
      config: Buffer.from(JSON.stringify(list)).toString('base64'),
      ifName: rt.ifname,
      networkName: list.name,
      netns: rt.netns,
      ...(rt.args ? { cniArgs: rt.args } : {}),
      ...(rt.capabilityArgs ? { capabilityArgs: rt.capabilityArgs } : {}),
      ...(result ? { result } : {}),
    };
    fs.mkdirSync(path.join(this.opts.cacheDir, 'results'), { recursive: true });
    fs.writeFileSync(this.cacheFile(list.name, rt), JSON.stringify(entry));
  }

  private cacheRead(network: string, rt: RuntimeConf): CachedAttachment | undefined {
    const f = this.cacheFile(network, rt);
    return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as CachedAttachment) : undefined;
  }

  private cacheDelete(network: string, rt: RuntimeConf): void {
    fs.rmSync(this.cacheFile(network, rt), { force: true });
  }
}
