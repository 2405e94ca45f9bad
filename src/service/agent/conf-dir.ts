/**
 * The networks the service serves before any verb arrives: hcn-cni's configurations in the runtime's CNI
 * configuration directory (`hcn-cni serve --conf-dir`, the directory `hcn-cni install` wrote the conflist to).
 *
 * Why the directory and not the records: releasing an IP a DEL had to keep runs the network's delegated IPAM, which
 * is given the network's whole configuration, as the runtime would give it; the records do not carry that (and a copy
 * in every record would go stale when the operator changes the configuration). The directory is what the runtime
 * itself reads. What is read is the truth for the networks it names (src/service/served-configs.ts ServedConfigs.fromDir): an edited file
 * replaces the configuration served, a removed one stops being served; a file read unchanged leaves a verb's
 * configuration of the same network in place (the runtime read that file too, and the verb's carries its CNI_PATH).
 *
 * Read at start and again when a file changed (by size and modification time), at most every RESCAN_MS.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CONF_EXTENSIONS, MAX_CONF_FILE_BYTES, confFromPlugin, pluginConfigs } from '../../cni/conf-list';
import type { IpamClient, NetConf } from '../../cni/types';
import type { Logger } from '../../log/logger';

export interface ConfDirOptions {
  dir: string;
  /** CNI_PATH for a delegated IPAM (the runtime's bin directories). */
  binDirs: readonly string[];
  platform: NodeJS.Platform;
  defaults: { stateDir: string; logFile?: string };
  log: Logger;
  /** The plugin type that is ours in a conflist (the executable's name). */
  pluginType?: string;
}

export const RESCAN_MS = 10_000;

/** Returns a function that gives the configurations found (re-read when the directory changed). */
export function watchConfDir(o: ConfDirOptions): () => Array<{ conf: NetConf; ipam: IpamClient }> {
  let lastScan = -Infinity;
  let signature = '';
  let found: Array<{ conf: NetConf; ipam: IpamClient }> = [];
  return () => {
    const now = Date.now();
    if (now - lastScan < RESCAN_MS && now >= lastScan) return found;
    lastScan = now;
    const files = listConfFiles(o.dir);
    const sig = files.map((f) => `${f.name}:${f.size}:${f.mtimeMs}`).join('|');
    if (sig === signature) return found;
    signature = sig;
    found = files.flatMap((f) => readOne(o, f.name));
    o.log.info({ confDir: o.dir, networks: found.map((c) => c.conf.name) }, 'service: configurations read');
    return found;
  };
}

function listConfFiles(dir: string): Array<{ name: string; size: number; mtimeMs: number }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return []; // not there (yet): nothing to serve from it
  }
  return names
    .filter((n) => CONF_EXTENSIONS.some((e) => n.endsWith(e)))
    .sort()
    .flatMap((name) => {
      try {
        const st = fs.statSync(path.join(dir, name));
        return st.isFile() ? [{ name, size: st.size, mtimeMs: st.mtimeMs }] : [];
      } catch {
        return [];
      }
    });
}

function readOne(o: ConfDirOptions, name: string): Array<{ conf: NetConf; ipam: IpamClient }> {
  const file = path.join(o.dir, name);
  try {
    if (fs.statSync(file).size > MAX_CONF_FILE_BYTES) throw new Error(`larger than ${MAX_CONF_FILE_BYTES} bytes`);
    const raws = pluginConfigs(fs.readFileSync(file, 'utf8'), name, o.pluginType ?? 'hcn-cni');
    return raws.map((raw) => confFromPlugin(raw, { platform: o.platform, defaults: o.defaults, path: o.binDirs }));
  } catch (e) {
    // One bad file costs its network, never the others'.
    o.log.warn({ file, err: (e as Error).message }, 'service: a configuration file could not be read; skipped');
    return [];
  }
}
