/**
 * `hcn-cni version`: the plugin version, the CNI versions it speaks, what the addon found on this host (HCN v2,
 * HNSCall v1, libraries, missing functions, load error), the HNS version, and which API "apiVersion": "auto" picks
 * and why (src/plugin/api-version.ts chooseApi, the rule the plugin itself applies).
 */
import { SUPPORTED_VERSIONS } from '../../cni/types';
import { formatVersion } from '../../hns/features';
import { Hcn } from '../../hns/hcn';
import { loadNative } from '../../hns/native';
import type { NativeCapabilities } from '../../hns/native-types';
import * as fs from 'fs';
import * as path from 'path';
import { chooseApi } from '../../plugin/api-version';
import { OpsError, type OpsContext } from './context';
import { describeFailure } from './describe-failure';
import { hcnCause, isUnreachable } from '../../hns/hcn-error';

/** Inlined by the esbuild bundle (define: { __HCN_CNI_VERSION__: JSON.stringify(pkg.version) }). */
declare const __HCN_CNI_VERSION__: string | undefined;

/** The bundle's inlined version; unbundled (tsc's dist/), the version in hcn-cni's own package.json above this file. */
export function pluginVersion(): string {
  if (typeof __HCN_CNI_VERSION__ === 'string') return __HCN_CNI_VERSION__;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'hcn-cni' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here
    }
    if (path.dirname(dir) === dir) return 'unknown (built without __HCN_CNI_VERSION__)';
  }
}

interface ApiPick {
  version?: 1 | 2;
  reason?: string;
  error?: string;
}

interface VersionInfo {
  plugin: string;
  cniVersions: string[];
  platform: string;
  node: string;
  configuration: string;
  addon: { path?: string; source?: string; capabilities?: NativeCapabilities; error?: string };
  hns: { version?: string; error?: string };
  api: { configured: string; auto?: ApiPick; configuredPick?: ApiPick };
}

export async function runVersion(ctx: OpsContext): Promise<number> {
  const failure = {
    platform: ctx.platform,
    hcnSim: ctx.io.env.HCN_SIM,
    verbose: ctx.args.verbose,
    hnsTimeoutSeconds: ctx.conf.hnsTimeoutSeconds,
  };
  const info: VersionInfo = {
    plugin: pluginVersion(),
    cniVersions: [...SUPPORTED_VERSIONS],
    platform: `${ctx.platform}/${process.arch}`,
    node: process.version,
    configuration: ctx.loaded.source,
    addon: {},
    hns: {},
    api: { configured: String(ctx.conf.apiVersion) },
  };
  let unreachable: unknown;
  let hcn: Hcn | undefined;
  try {
    const loaded = loadNative(ctx.io.load.addonPath || ctx.io.load.libraryPath ? ctx.io.load : {});
    info.addon = { path: loaded.addonPath, source: loaded.source, capabilities: loaded.capabilities };
    hcn = new Hcn(loaded.native, loaded.capabilities, { timeoutMs: ctx.conf.hnsTimeoutSeconds * 1000 });
  } catch (e) {
    info.addon.error = (e as Error).message;
  }
  if (hcn) {
    if (hcn.capabilities.v1Supported) {
      try {
        const v = await hcn.version();
        info.hns.version = formatVersion(v);
      } catch (e) {
        info.hns.error = describeFailure(e, failure);
        if (isUnreachable(hcnCause(e))) unreachable = e;
      }
    } else {
      info.hns.error = 'HNSCall (vmcompute.dll) is not available, so the HNS version cannot be asked';
    }
    const pick = async (setting: 'auto' | 1 | 2): Promise<ApiPick> => {
      try {
        const c = await chooseApi(setting, hcn!);
        return { version: c.version, reason: c.reason };
      } catch (e) {
        if (isUnreachable(hcnCause(e))) unreachable ??= e;
        return { error: describeFailure(e, failure) };
      }
    };
    // Ask only when HNS answered: otherwise the same unreachable error would be reported three times.
    if (!unreachable) {
      info.api.auto = await pick('auto');
      if (ctx.conf.apiVersion !== 'auto') info.api.configuredPick = await pick(ctx.conf.apiVersion);
    }
  }

  if (ctx.args.json) ctx.json(info);
  else ctx.out(render(info));
  if (info.addon.error) throw new OpsError(`the native addon could not be loaded: ${info.addon.error}`);
  if (unreachable) throw unreachable;
  return 0;
}

function render(info: VersionInfo): string {
  const lines: string[] = [];
  const kv = (k: string, v: string) => lines.push(`${`${k}:`.padEnd(22)}${v}`);
  const yesNo = (b: boolean) => (b ? 'yes' : 'no');
  kv('hcn-cni', info.plugin);
  kv('CNI versions', info.cniVersions.join(', '));
  kv('platform', `${info.platform}, node ${info.node}`);
  kv('configuration', info.configuration);
  if (info.addon.error) kv('addon', `NOT LOADED: ${info.addon.error}`);
  else {
    const c = info.addon.capabilities!;
    kv('addon', `${info.addon.path} (${info.addon.source})`);
    kv('  HCN (v2)', `${yesNo(c.v2Supported)}${c.hcnLibrary ? ` from ${c.hcnLibrary}` : ''}`);
    kv('  HNSCall (v1)', `${yesNo(c.v1Supported)}${c.v1Library ? ` from ${c.v1Library}` : ''}`);
    kv('  adapters from', c.adapterSource);
    kv('  missing functions', c.missing.length ? c.missing.join(', ') : 'none');
    if (c.loadError) kv('  load error', c.loadError);
  }
  kv('HNS version', info.hns.version ?? `unknown: ${(info.hns.error ?? 'not asked').split('\n')[0]}`);
  kv(
    'apiVersion',
    `${JSON.stringify(info.api.configured === 'auto' ? 'auto' : Number(info.api.configured))} in the configuration`,
  );
  const show = (p: ApiPick | undefined) =>
    p
      ? p.version
        ? `v${p.version} (${p.reason})`
        : `none: ${p.error!.split('\n')[0]}`
      : 'not decided (HNS did not answer)';
  kv('"auto" would pick', show(info.api.auto));
  if (info.api.configured !== 'auto') kv('configured gives', show(info.api.configuredPick));
  return lines.join('\n') + '\n';
}
