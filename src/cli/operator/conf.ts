/**
 * Which configuration the operator tool works with: the hcn-cni entry of a .conflist (with the list's name and
 * cniVersion, as libcni hands them to the plugin) or a .conf, validated by the plugin's own parseNetConf. Default:
 * the first file of the CNI configuration directory, in libcni's order (sorted names, .conf/.conflist/.json), that
 * holds an hcn-cni plugin; when there is none, the built-in defaults.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseNetConf } from '../../cni/config';
import { parseJsonText } from '../../cni/json-text';
import { isCniError } from '../../cni/cni-error';
import type { NetConf } from '../../cni/types';

export const PLUGIN_TYPE = 'hcn-cni';
const CONF_EXTENSIONS = ['.conf', '.conflist', '.json'];

export { defaultBinDir as defaultCniBinDir, defaultConfDir, defaultStateDir } from '../../cni/defaults';
import { defaultConfDir, defaultStateDir } from '../../cni/defaults';

export interface LoadedConf {
  conf: NetConf;
  /** The file it came from; undefined for the built-in defaults. */
  file?: string;
  /** For people: "/etc/cni/net.d/10-hcn.conflist" or "built-in defaults (…)". */
  source: string;
}

export interface LoadConfOptions {
  /** --conf */
  file?: string;
  /** Where to look without --conf (default: the platform's CNI configuration directory). */
  confDir?: string;
  /** --state-dir */
  stateDir?: string;
  platform: NodeJS.Platform;
}

/** A configuration problem: the message names the file. */
export class ConfError extends Error {
  override readonly name = 'ConfError';
}

/** The plugin configuration for hcn-cni in a parsed conf/conflist document, or undefined when it has none. */
export function hcnPluginConf(doc: unknown): Record<string, unknown> | undefined {
  if (!isObject(doc)) return undefined;
  const plugins = doc.plugins;
  if (Array.isArray(plugins)) {
    const entry = plugins.find((p) => isObject(p) && isOurType(p.type));
    if (!isObject(entry)) return undefined;
    // libcni injects the list's name and cniVersion into every plugin configuration.
    const raw: Record<string, unknown> = { ...entry };
    if (doc.cniVersion !== undefined) raw.cniVersion = doc.cniVersion;
    if (doc.name !== undefined) raw.name = doc.name;
    return raw;
  }
  return isOurType(doc.type) ? { ...doc } : undefined;
}

export function loadConf(options: LoadConfOptions): LoadedConf {
  const { platform } = options;
  let loaded: LoadedConf;
  if (options.file !== undefined) {
    const file = path.resolve(options.file);
    const raw = hcnPluginConf(readJson(file));
    if (!raw) throw new ConfError(`${file} has no plugin of type "${PLUGIN_TYPE}"`);
    loaded = { conf: parse(raw, file, platform), file, source: file };
  } else {
    const dir = options.confDir ?? defaultConfDir(platform);
    const found = findInDir(dir);
    if (found) {
      loaded = { conf: parse(found.raw, found.file, platform), file: found.file, source: found.file };
    } else {
      const raw = { cniVersion: '1.1.0', name: PLUGIN_TYPE, type: PLUGIN_TYPE };
      loaded = {
        conf: parse(raw, 'built-in defaults', platform),
        source: `built-in defaults (no "${PLUGIN_TYPE}" plugin configuration in ${dir})`,
      };
    }
  }
  if (options.stateDir !== undefined) loaded.conf.stateDir = path.resolve(options.stateDir);
  return loaded;
}

function findInDir(dir: string): { file: string; raw: Record<string, unknown> } | undefined {
  return hcnConfFiles(dir)[0];
}

/**
 * Every configuration file of the directory that holds an hcn-cni plugin, in libcni's order (sorted names,
 * .conf/.conflist/.json); a missing directory has none.
 */
export function hcnConfFiles(dir: string): Array<{ file: string; raw: Record<string, unknown> }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const found: Array<{ file: string; raw: Record<string, unknown> }> = [];
  for (const name of names.filter((n) => CONF_EXTENSIONS.includes(path.extname(n).toLowerCase())).sort()) {
    const file = path.join(dir, name);
    let doc: unknown;
    try {
      doc = parseJsonText(fs.readFileSync(file, 'utf8'));
    } catch {
      continue; // someone else's broken file is not ours to judge
    }
    const raw = hcnPluginConf(doc);
    if (raw) found.push({ file, raw });
  }
  return found;
}

function parse(raw: Record<string, unknown>, where: string, platform: NodeJS.Platform): NetConf {
  try {
    return parseNetConf(raw, { platform, defaults: { stateDir: defaultStateDir(platform) }, verb: 'STATUS' });
  } catch (e) {
    if (isCniError(e))
      throw new ConfError(`${where}: invalid hcn-cni configuration: ${e.message} (CNI code ${e.code})`);
    throw e;
  }
}

export function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return parseJsonText(text);
  } catch (e) {
    throw new ConfError(`${file} is not JSON: ${(e as Error).message}`);
  }
}

function isOurType(t: unknown): boolean {
  return typeof t === 'string' && t.toLowerCase() === PLUGIN_TYPE;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
