/**
 * parseNetConf: the plugin configuration from stdin → a validated NetConf with every default applied.
 *
 * Rules (see CONFIG_KEYS for the keys; the groups of keys are read in config-network.ts and config-pod.ts):
 * - Keys match case-insensitively at every level we interpret (the incumbents are Go, whose JSON decoding does);
 *   two spellings of one key in one object are code 7.
 * - A bad value is code 7 and names the key path and the value. A value we understand but cannot honour on Windows
 *   (ipMasq: true) is code 2. Addresses of either family are accepted wherever an address is, each validated by its
 *   family (dual-stack: `subnet` and `gateway` take one value per family).
 * - Unknown keys pass through (the spec says so) and are listed in `warnings` for the dispatcher to log.
 * - The incumbents' shapes are accepted: Azure/sdnbridge AdditionalArgs [{Name, Value}], win-bridge
 *   policies [{name, value}] and ipMasqNetwork, Azure windowsSettings, sdnbridge optionalFlags.loopbackDSR.
 */
import * as path from 'node:path';

import { ADOPT_PEERS, DEFAULTS, TOLERATED_KEYS, TOP_LEVEL_KEYS } from './config-keys';
import { readCreation, readEndpointSettings, readLimits, readPlacement } from './config-network';
import { parseAttachments, readPodSettings } from './config-pod';
import { readSetting, setting } from './config-read';
import { CONTAINER_ID_PATTERN } from './env';
import { CniCode, CniError } from './cni-error';
import { Fields, invalidConfig, invalidConfigMsg, isPlainObject, describeValue } from './fields';
import type { AdoptPeer, CniVersion, NetConf, Verb } from './types';
import { checkValueBounds } from './value-bounds';
import { supportedVersion, versionOrDefault } from './version';

export interface ConfContextOptions {
  platform: NodeJS.Platform;
  defaults: { stateDir: string; logFile?: string };
  verb: Verb;
  /** The cniVersion the dispatcher has already read and checked (it is read once); read here when not given. */
  cniVersion?: CniVersion;
}

/** The defaults of the keys (from their entries in KEY_SPECS, src/cni/config-keys.ts). */
export { DEFAULTS };

/** parseNetConf: validate and normalise the stdin configuration (already JSON-parsed), in the order of its steps. */
export function parseNetConf(raw: unknown, ctx: ConfContextOptions): NetConf {
  const top = configurationObject(raw);
  const warnings: string[] = [];
  const flat = flattenDelegate(top, warnings);
  const f = new Fields(flat, '');
  const identity = readIdentity(f, ctx);
  const placement = readPlacement(f, identity.name);
  const creation = readCreation(f, placement.mode, warnings);
  const endpoint = readEndpointSettings(f);
  const limits = readLimits(f, warnings);
  const housekeeping = readHousekeeping(f, ctx);
  const pod = readPodSettings(f, warnings, creation.createNetwork && creation.subnetFromIpam);
  const validAttachments = ctx.verb === 'GC' ? parseAttachments(f, warnings) : undefined;
  listUnknownKeys(f, warnings);
  return withoutUndefined({
    ...identity,
    ...placement,
    createNetwork: creation.createNetwork,
    createNetworkFromMaster: creation.createNetworkFromMaster,
    ...endpoint,
    ...pod.policies,
    ...limits,
    portMappings: pod.runtime.portMappings,
    ...housekeeping,
    warnings,
    raw: top,
    subnets: creation.subnets.length > 0 ? creation.subnets : undefined,
    ...pod.optional,
    validAttachments,
    effective: flat !== top ? flat : undefined,
  });
}

/** configurationObject: a JSON object within the value bounds (src/cni/value-bounds.ts). */
function configurationObject(raw: unknown): Record<string, unknown> {
  if (!isPlainObject(raw)) {
    throw new CniError(
      CniCode.DECODE_FAILURE,
      `network configuration must be a JSON object, got ${describeValue(raw)}`,
    );
  }
  checkValueBounds(raw);
  return raw;
}

/** withoutUndefined: a NetConf without the optional fields that are not set (they are absent, not undefined). */
function withoutUndefined(conf: NetConf): NetConf {
  for (const k of Object.keys(conf) as (keyof NetConf)[]) if (conf[k] === undefined) delete conf[k];
  return conf;
}

/** The spec's keys: cniVersion (handed on by the dispatcher, or read here), name and type. */
function readIdentity(f: Fields, ctx: ConfContextOptions): Pick<NetConf, 'cniVersion' | 'name' | 'type'> {
  const cniVersion = ctx.cniVersion ?? supportedVersion(versionOrDefault(f.get('cniVersion')));
  const name = f.get('name');
  if (typeof name !== 'string' || !CONTAINER_ID_PATTERN.test(name) || name.length > MAX_NAME_LENGTH) {
    throw invalidConfig(
      f.pathOf('name'),
      `a letter or digit followed by letters, digits, "_", "." or "-" (at most ${MAX_NAME_LENGTH} characters)`,
      name,
    );
  }
  const type = f.nonEmptyString('type');
  if (type === undefined) throw invalidConfig(f.pathOf('type'), 'a non-empty string', undefined);
  return { cniVersion, name, type };
}

/**
 * The CNI spec does not bound `name`, but runtimes and IPAM plugins use it as a file name (host-local keeps
 * <dataDir>/<name>/), and it is written into every record: 128 characters is generous and fits every file system.
 */
const MAX_NAME_LENGTH = 128;

type Housekeeping = Pick<
  NetConf,
  | 'stateDir'
  | 'logFile'
  | 'logLevel'
  | 'audit'
  | 'auditIntervalSeconds'
  | 'repair'
  | 'adopt'
  | 'iov'
  | 'disableHostPort'
>;

/** The plugin's own housekeeping (state, logs, audit, repair, adoption) and the delegated NIC's flags. */
function readHousekeeping(f: Fields, ctx: ConfContextOptions): Housekeeping {
  return {
    stateDir: absolutePath(f, 'stateDir', ctx.platform) ?? ctx.defaults.stateDir,
    logFile: absolutePath(f, 'logFile', ctx.platform) ?? ctx.defaults.logFile,
    logLevel: setting(f, 'logLevel'),
    audit: setting(f, 'audit'),
    auditIntervalSeconds: setting(f, 'auditIntervalSeconds'),
    repair: setting(f, 'repair'),
    adopt: parseAdopt(f),
    iov: setting(f, 'iov'),
    disableHostPort: readSetting(f, 'disableHostPort'),
  };
}

/** The peers whose ambiguous names may be acted on (src/plugin/peer-endpoints.ts); each at most once. */
function parseAdopt(f: Fields): AdoptPeer[] {
  const peers: AdoptPeer[] = [];
  f.stringArray('adopt', 'the name of a peer plugin ("azure")', (s, p) => {
    const peer = ADOPT_PEERS.find((x) => x === s.toLowerCase());
    if (peer === undefined) throw invalidConfig(p, 'one of "azure"', s);
    if (!peers.includes(peer)) peers.push(peer);
  });
  return peers;
}

/**
 * absolutePath: a non-empty absolute path for the platform. Relative paths are refused because a runtime starts
 * plugins in an arbitrary working directory (sdnbridge's wincni.log lands wherever that is).
 */
function absolutePath(f: Fields, name: string, platform: NodeJS.Platform): string | undefined {
  const v = f.get(name);
  if (v === undefined) return undefined;
  const impl = platform === 'win32' ? path.win32 : path.posix;
  if (typeof v !== 'string' || v === '' || v.includes('\0') || !impl.isAbsolute(v)) {
    throw invalidConfig(f.pathOf(name), `an absolute ${platform === 'win32' ? 'Windows ' : ''}path`, v);
  }
  return v;
}

/** Everything documented is known; what is left was neither documented nor reserved, and is a warning. */
function listUnknownKeys(f: Fields, warnings: string[]): void {
  f.touch(...TOP_LEVEL_KEYS, ...TOLERATED_KEYS);
  for (const k of f.unknownKeys()) {
    if (!k.toLowerCase().startsWith('cni.dev/')) warnings.push(`unknown key "${k}" is ignored`);
  }
}

/**
 * flattenDelegate: a flannel-style wrapper ({"type": "flannel", "delegate": {...the real settings...}}, as in
 * containernetworking/plugins win-bridge/sample-v2.conf and microsoft/windows-container-networking
 * example/flannel_*.conf). flannel hands the delegate object to the delegate plugin with name and cniVersion set, so
 * the delegate's keys are read here as if they were top-level; a key present in both with different values is
 * code 7. flannel would also have filled in ipam from its subnet lease, which no plugin but flannel can read.
 */
function flattenDelegate(raw: Record<string, unknown>, warnings: string[]): Record<string, unknown> {
  const key = Object.keys(raw).find((k) => k.toLowerCase() === 'delegate');
  if (key === undefined || raw[key] === null) return raw;
  const delegate = raw[key];
  if (!isPlainObject(delegate))
    throw invalidConfig(key, 'an object (the settings of a flannel-style wrapper)', delegate);
  const out: Record<string, unknown> = {};
  const lowerOut = new Map<string, string>();
  for (const [k, v] of Object.entries(delegate)) {
    if (k.toLowerCase() === 'type') continue; // the delegate's type names the peer plugin this configuration replaces
    out[k] = v;
    lowerOut.set(k.toLowerCase(), k);
  }
  for (const [k, v] of Object.entries(raw)) {
    if (k === key) continue;
    const dk = lowerOut.get(k.toLowerCase());
    if (dk !== undefined) {
      if (JSON.stringify(raw[k]) !== JSON.stringify(out[dk])) {
        throw invalidConfigMsg(
          `"${k}" is set both at the top level (${describeValue(v)}) and in "${key}.${dk}" (${describeValue(out[dk])}); keep one`,
        );
      }
      delete out[dk];
    }
    out[k] = v;
  }
  const dt = Object.entries(delegate).find(([k]) => k.toLowerCase() === 'type')?.[1];
  const hasIpam = Object.keys(delegate).some((k) => k.toLowerCase() === 'ipam');
  warnings.push(
    `"${key}" (a flannel-style wrapper${typeof dt === 'string' ? ` for ${JSON.stringify(dt)}` : ''}): its settings are applied as top-level keys` +
      (hasIpam ? '' : '; flannel\'s subnet lease is not read, so HNS assigns addresses unless "ipam" is set'),
  );
  return out;
}
