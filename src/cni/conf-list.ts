/**
 * A configuration file of the runtime's CNI configuration directory, read as libcni reads it: a `.conflist` is a list
 * whose plugins each get their own object with the list's `name` and `cniVersion` put in (containernetworking/cni
 * libcni/api.go buildOneConfig); a `.conf` or `.json` is one plugin's configuration as it stands (libcni/conf.go
 * ConfFiles and ConfListFromConf). The resident service reads the directory it was installed with, so that the
 * networks whose records are on disk are served (audited, repaired, their kept IPs released) before any verb of
 * theirs arrives.
 */
import { parseNetConf } from './config';
import { createIpamClient } from './ipam';
import { isPlainObject } from './fields';
import { parseJsonText } from './json-text';
import type { IpamClient, NetConf } from './types';

/** The file names libcni loads from a configuration directory (libcni/conf.go ConfFiles with its extensions). */
export const CONF_EXTENSIONS = ['.conf', '.conflist', '.json'] as const;

/** At most this much of one file is read: a real configuration is a few KiB. */
export const MAX_CONF_FILE_BYTES = 1024 * 1024;

/** Each configuration of a plugin of this type in the file's text, with name and cniVersion as libcni gives them. */
export function pluginConfigs(text: string, fileName: string, pluginType: string): Array<Record<string, unknown>> {
  const raw: unknown = parseJsonText(text);
  if (!isPlainObject(raw)) return [];
  if (!fileName.endsWith('.conflist')) return raw.type === pluginType ? [raw] : [];
  const plugins = Array.isArray(raw.plugins) ? raw.plugins : [];
  return plugins
    .filter((p): p is Record<string, unknown> => isPlainObject(p) && p.type === pluginType)
    .map((p) => ({ ...p, name: raw.name, cniVersion: raw.cniVersion }));
}

export interface ConfFromFileOptions {
  platform: NodeJS.Platform;
  defaults: { stateDir: string; logFile?: string };
  /** CNI_PATH for a delegated IPAM, split (the runtime's bin directories). */
  path: readonly string[];
}

/** The configuration and its IPAM client, as a verb of this network would have them (no attachment). */
export function confFromPlugin(
  raw: Record<string, unknown>,
  o: ConfFromFileOptions,
): { conf: NetConf; ipam: IpamClient } {
  const conf = parseNetConf(raw, { platform: o.platform, defaults: o.defaults, verb: 'STATUS' });
  const stdin = Buffer.from(JSON.stringify(conf.effective ?? raw));
  const env = { CNI_PATH: o.path.join(o.platform === 'win32' ? ';' : ':') };
  const ipam = createIpamClient({ conf, env, stdin, path: o.path, platform: o.platform });
  return { conf, ipam };
}
