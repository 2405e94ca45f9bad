/**
 * The conflist install writes: a template (the DaemonSet's ConfigMap, deploy/*.conflist) with the node's pod CIDR put
 * where it says `__POD_SUBNET__`, and the cniVersion the found containerd accepts. Checked with the plugin's own
 * parser (the same one every ADD uses) before it is written, so containerd never loads a conflist every ADD of which
 * would fail.
 */
import { parseNetConf } from '../cni/config';
import { CniError } from '../cni/cni-error';
import { InstallRefusal } from './refusal';

export const POD_SUBNET_PLACEHOLDER = '__POD_SUBNET__';

function walk(v: unknown, f: (s: string) => unknown): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v))
    return v.flatMap((x) => (x === POD_SUBNET_PLACEHOLDER && Array.isArray(f(x)) ? (f(x) as unknown[]) : [walk(x, f)]));
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, f)]));
  return v;
}

function parseTemplate(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new InstallRefusal(`${source} is not JSON: ${(e as Error).message}`);
  }
  if (
    typeof doc !== 'object' ||
    doc === null ||
    Array.isArray(doc) ||
    !Array.isArray((doc as { plugins?: unknown }).plugins)
  )
    throw new InstallRefusal(`${source} is not a conflist (an object with a "plugins" list)`);
  return doc as Record<string, unknown>;
}

/** Whether the template needs the node's pod CIDR (then it is read from the API unless given). */
export function needsPodCidr(text: string): boolean {
  return text.includes(POD_SUBNET_PLACEHOLDER);
}

export interface RenderOptions {
  source: string;
  /** The node's pod CIDRs (one per family); required when the template has the placeholder. */
  podCidrs?: string[];
  cniVersion: string;
  platform: NodeJS.Platform;
  stateDir: string;
}

/** The conflist's text as it will be installed (stable: the same inputs give the same bytes, so a rerun is a no-op). */
export function renderConflist(text: string, o: RenderOptions): string {
  const doc = parseTemplate(text, o.source);
  if (needsPodCidr(text) && (o.podCidrs === undefined || o.podCidrs.length === 0))
    throw new InstallRefusal(`${o.source} needs the node's pod CIDR (${POD_SUBNET_PLACEHOLDER}) and none was found`);
  const cidrs = o.podCidrs ?? [];
  const filled = walk(doc, (s) =>
    s === POD_SUBNET_PLACEHOLDER
      ? cidrs.length === 1
        ? cidrs[0]
        : cidrs
      : s.split(POD_SUBNET_PLACEHOLDER).join(cidrs[0] ?? ''),
  ) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...filled, cniVersion: o.cniVersion };
  const ours = (out.plugins as unknown[]).filter(
    (p) => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'hcn-cni',
  );
  if (ours.length !== 1)
    throw new InstallRefusal(`${o.source} has ${ours.length} plugins of "type": "hcn-cni"; exactly one is needed`);
  // libcni hands each plugin the list's name and cniVersion.
  const entry = { ...(ours[0] as Record<string, unknown>), name: out.name, cniVersion: o.cniVersion };
  try {
    parseNetConf(entry, { platform: o.platform, defaults: { stateDir: o.stateDir }, verb: 'ADD' });
  } catch (e) {
    if (e instanceof CniError) throw new InstallRefusal(`${o.source} would fail every ADD: ${e.message}`);
    throw e;
  }
  return `${JSON.stringify(out, null, 2)}\n`;
}
