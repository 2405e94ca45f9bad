/**
 * parseNetConf: the plugin configuration from stdin → a validated NetConf with every default applied.
 *
 * Rules (see CONFIG_KEYS for the keys):
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

import {
  ADOPT_PEERS,
  DEFAULTS,
  TOLERATED_KEYS,
  TOP_LEVEL_KEYS,
  ruleOf,
  type KeyRule,
  type RuleOf,
  type RuledKey,
  type ValueOf,
} from './config-keys';
import { CONTAINER_ID_PATTERN } from './env';
import { CniCode, CniError } from './cni-error';
import { Fields, invalidConfig, invalidConfigMsg, isPlainObject, describeValue } from './fields';
import {
  formatIp,
  formatMacDash,
  parseCidr,
  parseIp,
  parseIpv4,
  parseIpv4Cidr,
  parseMac,
  unicastMacProblem,
} from '../net/addr';
import { firstHost } from '../net/ipv4';
import { parsePrevResult } from './result';
import type {
  AdoptPeer,
  ApiVersionSetting,
  Attachment,
  CniVersion,
  Dns,
  NetConf,
  PortMapping,
  RawPolicy,
  RuntimeDns,
  SubnetConf,
  Verb,
} from './types';
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

const PROTOCOLS: readonly PortMapping['protocol'][] = ['tcp', 'udp', 'sctp'];

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

/** readSetting: a key with a plain rule (boolean, integer, choice), read by its entry; `name` may be an alias. */
function readSetting<K extends RuledKey>(f: Fields, key: K, name: string = key): ValueOf<RuleOf<K>> | undefined {
  const rule: KeyRule = ruleOf(key);
  switch (rule.kind) {
    case 'boolean':
      return f.boolean(name) as ValueOf<RuleOf<K>> | undefined;
    case 'integer':
      return f.integer(name, rule.min, rule.max) as ValueOf<RuleOf<K>> | undefined;
    case 'choice':
      return oneOf(f, name, rule.choices) as ValueOf<RuleOf<K>> | undefined;
    case 'custom':
      throw new Error(`${key} is read by a function of its own`);
  }
}

/** setting: readSetting, or the key's default. */
function setting<K extends RuledKey & keyof typeof DEFAULTS>(f: Fields, key: K): ValueOf<RuleOf<K>> {
  return readSetting(f, key) ?? (DEFAULTS[key] as ValueOf<RuleOf<K>>);
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

type Placement = Pick<
  NetConf,
  'mode' | 'apiVersion' | 'networkName' | 'networkType' | 'networkTypeSet' | 'adapterName'
>;

/** Where the pod goes: the mode, the HNS API, and the network (its name, its type, the adapter it binds). */
function readPlacement(f: Fields, name: string): Placement {
  const mode = setting(f, 'mode');
  const apiVersion = parseApiVersion(f);
  const networkName = hnsNetworkName(f) ?? name;
  const givenType = readSetting(f, 'networkType');
  const networkType = givenType ?? DEFAULTS.networkType;
  const adapterName = parseAdapterName(f);
  return { mode, apiVersion, networkName, networkType, networkTypeSet: givenType !== undefined, adapterName };
}

interface Creation {
  createNetwork: boolean;
  createNetworkFromMaster: boolean;
  subnets: SubnetConf[];
  /** sdnbridge's ipam.subnet stands in for the IPv4 subnet. */
  subnetFromIpam: boolean;
}

/** Whether the plugin creates the network, and the subnets (and gateways) it is created with or expected to have. */
function readCreation(f: Fields, mode: NetConf['mode'], warnings: string[]): Creation {
  const sdn = sdnbridgeNetwork(f);
  // sdnbridge creates a missing network from "master" and "ipam.subnet" itself (microsoft/windows-container-networking
  // common/core/network.go getOrCreateNetwork): a configuration that names the adapter asks for that.
  const givenCreate = readSetting(f, 'createNetwork');
  const createFromMaster =
    givenCreate === undefined && f.has('master') && (f.has('subnet') || sdn.subnet !== undefined);
  const createNetwork = givenCreate ?? (createFromMaster ? true : DEFAULTS.createNetwork);
  if (createNetwork && mode === 'delegatedNic') {
    warnings.push('"createNetwork" only applies to bridge mode and is ignored in delegatedNic mode');
  }
  const plannedNetwork = createNetwork || mode === 'delegatedNic';
  const subnets = parseSubnets(f, plannedNetwork);
  const subnetFromIpam = sdn.subnet !== undefined && !subnets.some((s) => s.family === 4 && s.prefix);
  if (subnetFromIpam) useSdnbridgeSubnet(subnets, { subnet: sdn.subnet!, gateway: sdn.gateway }, plannedNetwork);
  if (createNetwork && !subnets.some((s) => s.prefix)) {
    throw invalidConfigMsg(
      `"${f.pathOf('createNetwork')}" is true but "subnet" is not set; a network can only be created with a subnet`,
    );
  }
  return { createNetwork, createNetworkFromMaster: createFromMaster, subnets, subnetFromIpam };
}

/** sdnbridge's ipam.subnet (+ ipam.routes[0].GW) stands in for a top-level IPv4 subnet that is not given. */
function useSdnbridgeSubnet(
  subnets: SubnetConf[],
  sdn: { subnet: string; gateway: string | undefined },
  plannedNetwork: boolean,
): void {
  const v4 = subnets.find((s) => s.family === 4);
  const gateway = v4?.gateway ?? sdn.gateway ?? (plannedNetwork ? firstHost(sdn.subnet) : undefined);
  const entry: SubnetConf = { family: 4, prefix: sdn.subnet, ...(gateway ? { gateway } : {}) };
  if (v4) Object.assign(v4, entry);
  else subnets.unshift(entry);
}

/** Settings of the pod's endpoint and its network: MTU, win-overlay's ipMasq and MAC prefix. */
function readEndpointSettings(f: Fields): Pick<NetConf, 'mtu' | 'ipMasq' | 'endpointMacPrefix'> {
  const mtu = readSetting(f, 'mtu');
  // win-overlay's meaning (containernetworking/plugins plugins/main/windows/win-overlay): the network's subnet is not
  // source-NATed (an OutBoundNAT exception), everything else is.
  const ipMasq = setting(f, 'ipMasq');
  return { mtu, ipMasq, endpointMacPrefix: parseMacPrefix(f) };
}

type Limits = Pick<NetConf, 'loopbackDSR' | 'hnsTimeoutSeconds' | 'ipamTimeoutSeconds' | 'outboundNatExceptions'>;

/** Azure's windowsSettings and sdnbridge's optionalFlags with their aliases, the time limits, the NAT exceptions. */
function readLimits(f: Fields, warnings: string[]): Limits {
  const windowsSettings = f.child('windowsSettings');
  const optionalFlags = f.child('optionalFlags');
  const loopbackDSR = parseLoopbackDsr(f, windowsSettings, optionalFlags);
  const hnsTimeoutSeconds = parseHnsTimeout(f, windowsSettings);
  const ipamTimeoutSeconds = setting(f, 'ipamTimeoutSeconds');
  for (const extra of [windowsSettings, optionalFlags]) {
    if (extra)
      for (const k of extra.unknownKeys()) warnings.push(`"${extra.path}.${k}" is not supported and is ignored`);
  }
  return { loopbackDSR, hnsTimeoutSeconds, ipamTimeoutSeconds, outboundNatExceptions: parseNatExceptions(f) };
}

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

interface PodSettings {
  policies: Pick<NetConf, 'dns' | 'endpointPolicies' | 'networkPolicies'>;
  runtime: RuntimeSettings;
  optional: Pick<NetConf, 'ipam' | 'runtimeDns' | 'runtimeMac' | 'prevResult'>;
}

/** What the pod gets: IPAM, DNS, HNS policies, the runtime's capabilities, the previous result. */
function readPodSettings(f: Fields, warnings: string[], ipamSubnetUsed: boolean): PodSettings {
  const ipam = parseIpam(f, warnings, ipamSubnetUsed);
  const dns = parseDns(f, warnings);
  const endpointPolicies: RawPolicy[] = [];
  const networkPolicies: RawPolicy[] = [];
  parsePolicies(f, 'AdditionalArgs', 'Name', 'Value', endpointPolicies, networkPolicies, warnings);
  parsePolicies(f, 'policies', 'name', 'value', endpointPolicies, networkPolicies, warnings);
  const runtime = parseRuntimeConfig(f, warnings);
  const prevRaw = f.get('prevResult');
  const prevResult = prevRaw === undefined ? undefined : parsePrevResult(prevRaw, f.pathOf('prevResult'));
  return {
    policies: { dns, endpointPolicies, networkPolicies },
    runtime,
    optional: { ipam, runtimeDns: runtime.dns, runtimeMac: runtime.mac, prevResult },
  };
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

/**
 * parseAdapterName: `adapterName`, or sdnbridge's `master` (the host adapter it creates the network on). It goes to
 * HNS as the network's NetAdapterName (v2) or NetworkAdapterName (v1), so it is HNS name text (isHnsText); a Windows
 * interface alias may hold blanks, parentheses and "/" ("vEthernet (Ethernet)").
 */
function parseAdapterName(f: Fields): string | undefined {
  const given: Array<[string, string]> = [];
  for (const key of ['adapterName', 'master']) {
    const v = f.nonEmptyString(key);
    if (v === undefined) continue;
    if (!isHnsText(v)) throw invalidConfig(f.pathOf(key), `an adapter name: ${HNS_TEXT}`, v);
    given.push([f.pathOf(key), v]);
  }
  return agree(given);
}

/**
 * sdnbridgeNetwork: the network sdnbridge would create, from `ipam.subnet` and `ipam.routes[0].GW` (microsoft/
 * windows-container-networking cni/cni.go GetNetworkInfo: gateway = routes[0].GW, else the subnet's first address).
 * Only an IPv4 network address counts; anything else in ipam.subnet is the delegated IPAM's business.
 */
function sdnbridgeNetwork(f: Fields): { subnet?: string; gateway?: string } {
  const ipam = f.child('ipam', false);
  if (!ipam) return {};
  const s = ipam.get('subnet');
  const cidr = typeof s === 'string' ? parseIpv4Cidr(s) : undefined;
  if (typeof s !== 'string' || !cidr || cidr.address !== cidr.network || cidr.prefix < 1 || cidr.prefix > 30) return {};
  const routes = ipam.get('routes');
  const first =
    Array.isArray(routes) && isPlainObject(routes[0])
      ? f.nested(routes[0], `${ipam.pathOf('routes')}[0]`, false)
      : undefined;
  const gw = first?.get('GW');
  if (typeof gw === 'string' && parseIpv4(gw) !== undefined) {
    const a = parseIpv4(gw)!;
    if (a > cidr.network && a < cidr.last) return { subnet: s, gateway: gw };
  }
  return { subnet: s };
}

/** parseMacPrefix: win-overlay's endpointMacPrefix, "xx-xx" (two hex bytes); default "0E-2A" as win-overlay's. */
function parseMacPrefix(f: Fields): string {
  const v = f.get('endpointMacPrefix');
  if (v === undefined) return DEFAULTS.endpointMacPrefix;
  if (typeof v !== 'string' || !/^[0-9a-fA-F]{2}-[0-9a-fA-F]{2}$/.test(v)) {
    throw invalidConfig(f.pathOf('endpointMacPrefix'), 'two hex bytes "xx-xx" (e.g. "0E-2A")', v);
  }
  return v.toUpperCase();
}

/** oneOf: a string matching one of `choices` case-insensitively, returned in canonical spelling. */
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

function oneOf<T extends string>(f: Fields, name: string, choices: readonly T[]): T | undefined {
  const v = f.get(name);
  if (v === undefined) return undefined;
  const hit = typeof v === 'string' ? choices.find((c) => c.toLowerCase() === v.toLowerCase()) : undefined;
  if (hit === undefined) throw invalidConfig(f.pathOf(name), `one of ${choices.map((c) => `"${c}"`).join(', ')}`, v);
  return hit;
}

function parseApiVersion(f: Fields): ApiVersionSetting {
  const v = f.get('apiVersion');
  if (v === undefined) return DEFAULTS.apiVersion;
  if (v === 1 || v === '1') return 1;
  if (v === 2 || v === '2') return 2;
  if (typeof v === 'string' && v.toLowerCase() === 'auto') return 'auto';
  throw invalidConfig(f.pathOf('apiVersion'), '"auto", 1 or 2', v);
}

const FAMILY_NAME = { 4: 'IPv4', 6: 'IPv6' } as const;
/** The longest subnet prefix per family: room for a network address, a gateway and at least one pod. */
const MAX_SUBNET_PREFIX = { 4: 30, 6: 126 } as const;

/** stringOrList: a string, or a list of strings (each with its own path for error messages). */
function stringOrList(f: Fields, name: string, expected: string): Array<[string, string]> {
  const v = f.get(name);
  if (v === undefined) return [];
  const p = f.pathOf(name);
  if (typeof v === 'string') return [[p, v]];
  if (!Array.isArray(v) || v.length === 0 || v.length > 2)
    throw invalidConfig(p, `${expected}, or a list of one per address family`, v);
  return v.map((e, i) => {
    if (typeof e !== 'string') throw invalidConfig(`${p}[${i}]`, expected, e);
    return [`${p}[${i}]`, e];
  });
}

/**
 * parseSubnets: `subnet` (an IPv4 or IPv6 CIDR, or a list of one per family for dual-stack) and `gateway` (likewise,
 * each matched to the subnet of its family). Every value is validated by its family: a network address with a
 * prefix that leaves room for a gateway and a pod, at most one subnet per family, and a gateway inside the subnet
 * of its own family. The gateway default (the subnet's first address) only exists where the plugin creates the
 * network; for an existing network HNS knows it.
 */
function parseSubnets(f: Fields, plannedNetwork: boolean): SubnetConf[] {
  const out: SubnetConf[] = [];
  for (const [p, v] of stringOrList(f, 'subnet', 'an IPv4 or IPv6 CIDR')) out.push(subnetEntry(p, v, out));
  const subnetsGiven = out.length > 0;
  const seen = new Set<number>();
  for (const [p, v] of stringOrList(f, 'gateway', 'an IPv4 or IPv6 address')) {
    const ip = parseIp(v);
    if (!ip) throw invalidConfig(p, 'an IPv4 or IPv6 address', v);
    if (seen.has(ip.family))
      throw invalidConfig(p, `one gateway per address family (a second ${FAMILY_NAME[ip.family]} gateway)`, v);
    seen.add(ip.family);
    if (subnetsGiven) subnetOfGateway(p, v, ip, out).gateway = v;
    else out.push({ family: ip.family, gateway: v });
  }
  if (plannedNetwork) {
    for (const s of out) if (s.prefix && !s.gateway) s.gateway = firstHost(s.prefix);
  }
  // IPv4 first: the order HNS, the peers and the results list the families in.
  return out.sort((x, y) => x.family - y.family);
}

/** subnetEntry: one `subnet` value: a network address, a prefix with room for a gateway and a pod, one per family. */
function subnetEntry(p: string, v: string, earlier: readonly SubnetConf[]): SubnetConf {
  const cidr = parseCidr(v);
  if (!cidr || cidr.prefix < 1 || cidr.prefix > MAX_SUBNET_PREFIX[cidr.family]) {
    throw invalidConfig(
      p,
      cidr
        ? `an ${FAMILY_NAME[cidr.family]} CIDR with a prefix from /1 to /${MAX_SUBNET_PREFIX[cidr.family]}`
        : 'an IPv4 CIDR (/1 to /30) or an IPv6 CIDR (/1 to /126)',
      v,
    );
  }
  if (cidr.address !== cidr.network) {
    throw invalidConfig(
      p,
      `a network address (host bits zero, e.g. "${formatIp(cidr.family, cidr.network)}/${cidr.prefix}")`,
      v,
    );
  }
  if (earlier.some((s) => s.family === cidr.family)) {
    throw invalidConfig(
      p,
      `one subnet per address family (a second ${FAMILY_NAME[cidr.family]} subnet cannot be given to one HNS endpoint)`,
      v,
    );
  }
  return { family: cidr.family, prefix: v };
}

/** subnetOfGateway: the configured subnet a gateway belongs to: of its family, and the gateway a host inside it. */
function subnetOfGateway(
  p: string,
  v: string,
  ip: { family: 4 | 6; value: bigint },
  subnets: readonly SubnetConf[],
): SubnetConf {
  const s = subnets.find((x) => x.family === ip.family);
  if (!s) {
    throw invalidConfig(
      p,
      `an address of the family of a configured subnet (${subnets.map((x) => x.prefix).join(', ')}); no ${FAMILY_NAME[ip.family]} subnet is set`,
      v,
    );
  }
  const cidr = parseCidr(s.prefix!)!;
  const broadcast = cidr.family === 4 ? cidr.last : cidr.last + 1n;
  if (ip.value <= cidr.network || ip.value >= broadcast)
    throw invalidConfig(p, `a host address inside subnet ${s.prefix}`, v);
  return s;
}

/**
 * parseLoopbackDsr: `loopbackDSR`, Azure's windowsSettings.enableLoopbackDSR, sdnbridge's optionalFlags.loopbackDSR.
 * They are one setting: giving it twice with different values is code 7 rather than a silent precedence rule.
 */
function parseLoopbackDsr(f: Fields, windowsSettings: Fields | undefined, optionalFlags: Fields | undefined): boolean {
  const given: Array<[string, boolean]> = [];
  const own = readSetting(f, 'loopbackDSR');
  if (own !== undefined) given.push([f.pathOf('loopbackDSR'), own]);
  const azure = windowsSettings && readSetting(windowsSettings, 'loopbackDSR', 'enableLoopbackDSR');
  if (azure !== undefined) given.push([windowsSettings!.pathOf('enableLoopbackDSR'), azure]);
  const sdn = optionalFlags && readSetting(optionalFlags, 'loopbackDSR');
  if (sdn !== undefined) given.push([optionalFlags!.pathOf('loopbackDSR'), sdn]);
  return agree(given) ?? DEFAULTS.loopbackDSR;
}

function parseHnsTimeout(f: Fields, windowsSettings: Fields | undefined): number {
  const given: Array<[string, number]> = [];
  const own = readSetting(f, 'hnsTimeoutSeconds');
  if (own !== undefined) given.push([f.pathOf('hnsTimeoutSeconds'), own]);
  const azure = windowsSettings && readSetting(windowsSettings, 'hnsTimeoutSeconds', 'hnsTimeoutDurationInSeconds');
  if (azure !== undefined) given.push([windowsSettings!.pathOf('hnsTimeoutDurationInSeconds'), azure]);
  return agree(given) ?? DEFAULTS.hnsTimeoutSeconds;
}

/** agree: the common value of aliases, or code 7 naming the two that disagree. */
function agree<T>(given: Array<[string, T]>): T | undefined {
  for (const [p, v] of given.slice(1)) {
    if (v !== given[0]![1]) {
      throw invalidConfigMsg(
        `"${given[0]![0]}" (${describeValue(given[0]![1])}) and "${p}" (${describeValue(v)}) are the same setting and disagree`,
      );
    }
  }
  return given[0]?.[1];
}

/** ipCidr: an entry of a CIDR list, validated by its family. */
function ipCidr(f: Fields, value: string, p: string): void {
  if (!parseCidr(value)) throw f.invalid(p, 'an IPv4 or IPv6 CIDR', value);
}

/**
 * A NAT exception is a destination network: its host bits must be zero ("10.0.0.1/8" is a typo for 10.0.0.0/8 or
 * for 10.0.0.1/32, and HNS's reading of it is not something to guess). Either family.
 */
function ipNetworkCidr(f: Fields, value: string, p: string): void {
  ipCidr(f, value, p);
  const c = parseCidr(value)!;
  if (c.address !== c.network) {
    throw f.invalid(
      p,
      `a network address with its host bits zero (${formatIp(c.family, c.network)}/${c.prefix})`,
      value,
    );
  }
}

/**
 * The CNI spec does not bound `name`, but runtimes and IPAM plugins use it as a file name (host-local keeps
 * <dataDir>/<name>/), and it is written into every record: 128 characters is generous and fits every file system.
 */
const MAX_NAME_LENGTH = 128;

/**
 * Text HNS stores as a name: HNS keeps UTF-16 strings (hcsshim's HostComputeNetwork.Name is a Go string sent as
 * JSON), so this accepts what can round-trip and be shown: 1–256 characters, no control characters (NUL ends a C
 * string on the way), no lone UTF-16 surrogates (not representable in UTF-8 or JSON text the same way twice), no
 * leading or trailing spaces.
 */
const HNS_TEXT = '1 to 256 printable characters without leading or trailing spaces';
function isHnsText(v: string): boolean {
  return !(
    v.length > 256 ||
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
    /[\u0000-\u001f\u007f]/.test(v) ||
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v) ||
    v.trim() !== v
  );
}

/**
 * networkName: the name of an HNS network, matched against HNS's list and sent in create requests: HNS name text
 * (isHnsText), and no path separators or names made only of dots (they are never network names and suggest a path
 * was pasted).
 */
function hnsNetworkName(f: Fields): string | undefined {
  const v = f.nonEmptyString('networkName');
  if (v === undefined) return undefined;
  const what =
    'an HNS network name: 1 to 256 printable characters, without "/", "\\", leading or trailing spaces, and not only dots';
  if (!isHnsText(v) || /[/\\]/.test(v) || /^\.+$/.test(v)) {
    throw invalidConfig(f.pathOf('networkName'), what, v);
  }
  return v;
}

function parseNatExceptions(f: Fields): string[] {
  const list = f.stringArray('outboundNatExceptions', 'an IPv4 or IPv6 CIDR', (s, p) => ipNetworkCidr(f, s, p)) ?? [];
  const masq = f.get('ipMasqNetwork');
  if (masq !== undefined) {
    if (typeof masq !== 'string') throw invalidConfig(f.pathOf('ipMasqNetwork'), 'an IPv4 or IPv6 CIDR', masq);
    ipNetworkCidr(f, masq, f.pathOf('ipMasqNetwork'));
    if (!list.includes(masq)) list.push(masq);
  }
  return list;
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

/**
 * parseIpam: `ipam` with a `type` that is a bare file name. The type is looked up on CNI_PATH only, so anything that
 * could steer the lookup elsewhere (separators, "..", a drive colon, NUL) is refused. An ipam block without a type
 * (sdnbridge uses one for the subnet) means "HNS assigns addresses" and is reported as ignored.
 */
function parseIpam(f: Fields, warnings: string[], subnetUsed: boolean): NetConf['ipam'] {
  const ipam = f.child('ipam', false);
  if (!ipam) return undefined;
  const typeKey = ipam.key('type');
  const t = ipam.get('type');
  if (t === undefined) {
    // ipam.subnet and ipam.routes made the network this ADD may create (sdnbridge's keys): they are not ignored.
    const keys = Object.keys(ipam.obj).filter((k) => !subnetUsed || !['subnet', 'routes'].includes(k.toLowerCase()));
    if (keys.length === 0) return undefined;
    if (keys.length > 0) {
      warnings.push(
        `"${ipam.path}" has no "type"; HNS assigns addresses and ${keys.map((k) => `"${ipam.path}.${k}"`).join(', ')} ignored`,
      );
    }
    return undefined;
  }
  const p = ipam.pathOf('type');
  if (typeof t !== 'string' || t === '' || /[/\\:\0]/.test(t) || t.includes('..') || /^\.+$/.test(t)) {
    throw invalidConfig(p, 'a plain executable name (no "/", "\\", "..", ":" or NUL)', t);
  }
  const out: Record<string, unknown> = { ...ipam.obj };
  if (typeKey !== undefined && typeKey !== 'type') delete out[typeKey];
  out.type = t;
  return out as NetConf['ipam'];
}

function parseDns(f: Fields, warnings: string[]): Dns {
  const d = f.child('dns');
  if (!d) return {};
  const out: Dns = {};
  const nameservers = d.ipAddressList('nameservers');
  const domain = d.domainName('domain');
  const search = d.domainNameList('search');
  const options = d.resolverOptionList('options');
  if (nameservers?.length) out.nameservers = nameservers;
  if (domain) out.domain = domain;
  if (search?.length) out.search = search;
  if (options?.length) out.options = options;
  for (const k of d.unknownKeys()) warnings.push(`unknown key "${d.path}.${k}" is ignored`);
  return out;
}

/**
 * parsePolicies: AdditionalArgs [{Name, Value}] (Azure CNI, sdnbridge) or policies [{name, value}] (win-bridge).
 * Value must be an object with a string Type; it is passed on verbatim for the HNS layer to translate.
 */
function parsePolicies(
  f: Fields,
  listKey: string,
  nameKey: string,
  valueKey: string,
  endpoint: RawPolicy[],
  network: RawPolicy[],
  warnings: string[],
): void {
  const list = f.array(listKey, `a list of {${nameKey}, ${valueKey}} objects`);
  if (!list) return;
  list.forEach((entry, i) => {
    const p = `${f.pathOf(listKey)}[${i}]`;
    if (!isPlainObject(entry)) throw f.invalid(p, `an object with "${nameKey}" and "${valueKey}"`, entry);
    const e = f.nested(entry, p);
    const kind = e.string(nameKey);
    const value = e.get(valueKey);
    for (const k of e.unknownKeys()) warnings.push(`unknown key "${p}.${k}" is ignored`);
    const target =
      kind?.toLowerCase() === 'endpointpolicy'
        ? endpoint
        : kind?.toLowerCase() === 'networkpolicy'
          ? network
          : undefined;
    if (!target) {
      warnings.push(
        `"${p}" (${nameKey} ${describeValue(kind)}) is ignored: only EndpointPolicy and NetworkPolicy are applied`,
      );
      return;
    }
    const vp = e.pathOf(valueKey);
    if (!isPlainObject(value)) throw f.invalid(vp, 'an HNS policy object', value);
    const v = f.nested(value, vp, false);
    const policyType = v.get('Type');
    if (typeof policyType !== 'string' || policyType === '')
      throw f.invalid(v.pathOf('Type'), 'a non-empty string', policyType);
    target.push({ source: vp, value });
  });
}

interface RuntimeSettings {
  portMappings: PortMapping[];
  dns?: RuntimeDns;
  mac?: string;
}

function parseRuntimeConfig(f: Fields, warnings: string[]): RuntimeSettings {
  const rc = f.child('runtimeConfig');
  const out: RuntimeSettings = { portMappings: [] };
  if (!rc) return out;
  out.portMappings = parsePortMappings(rc, warnings);

  const d = rc.child('dns');
  if (d) {
    const dns: RuntimeDns = {};
    const servers = d.ipAddressList('servers');
    const searches = d.domainNameList('searches');
    const options = d.resolverOptionList('options');
    if (servers) dns.servers = servers;
    if (searches) dns.searches = searches;
    if (options) dns.options = options;
    for (const k of d.unknownKeys()) warnings.push(`unknown key "${d.path}.${k}" is ignored`);
    out.dns = dns;
  }

  const mac = rc.string('mac', 'a MAC address');
  if (mac) {
    const bytes = parseMac(mac);
    if (!bytes)
      throw rc.invalid(rc.pathOf('mac'), 'a MAC address (AA:BB:CC:DD:EE:FF, AA-BB-CC-DD-EE-FF or AABBCCDDEEFF)', mac);
    const problem = unicastMacProblem(bytes);
    if (problem) throw rc.invalid(rc.pathOf('mac'), `a unicast MAC address, not ${problem}`, mac);
    out.mac = formatMacDash(bytes);
  }

  for (const k of rc.unknownKeys())
    warnings.push(`"${rc.path}.${k}" (capability ${k}) is not supported and is ignored`);
  return out;
}

function parsePortMappings(rc: Fields, warnings: string[]): PortMapping[] {
  const list = rc.array('portMappings', 'a list of port mappings');
  if (!list) return [];
  const seen = new Map<string, string>();
  return list.map((entry, i) => {
    const p = `${rc.pathOf('portMappings')}[${i}]`;
    if (!isPlainObject(entry)) throw rc.invalid(p, 'an object {hostPort, containerPort, protocol, hostIP}', entry);
    const m = rc.nested(entry, p);
    const hostPort = m.integer('hostPort', 1, 65535);
    if (hostPort === undefined) throw m.invalid(m.pathOf('hostPort'), 'an integer from 1 to 65535', undefined);
    const containerPort = m.integer('containerPort', 1, 65535);
    if (containerPort === undefined)
      throw m.invalid(m.pathOf('containerPort'), 'an integer from 1 to 65535', undefined);
    // Kubernetes always sends a protocol; hand-written CAP_ARGS often do not, and tcp is what they mean.
    const protocol = oneOf(m, 'protocol', PROTOCOLS) ?? 'tcp';
    const pm: PortMapping = { hostPort, containerPort, protocol };
    const hostIP = m.string('hostIP');
    if (hostIP) {
      if (!parseIp(hostIP)) throw m.invalid(m.pathOf('hostIP'), 'an IPv4 or IPv6 address', hostIP);
      pm.hostIP = hostIP;
    }
    for (const k of m.unknownKeys()) warnings.push(`unknown key "${p}.${k}" is ignored`);
    // HNS refuses a second mapping of the same host port; saying which entries collide is kinder than its HRESULT.
    const id = `${protocol}/${hostIP ?? '*'}/${hostPort}`;
    const first = seen.get(id);
    if (first !== undefined)
      throw invalidConfigMsg(`"${p}" maps ${protocol} host port ${hostPort} again (already mapped by "${first}")`);
    seen.set(id, p);
    return pm;
  });
}

/**
 * parseAttachments: GC's list of still-valid attachments. `cni.dev/valid-attachments` is read first and the older
 * `cni.dev/attachments` (the spelling at the spec-v1.1.0 tag) second; libcni sends both. null means an empty list
 * (Go marshals an empty slice that way). Neither key: libcni's GC without arguments (an empty list, see below).
 */
function parseAttachments(f: Fields, warnings: string[]): Attachment[] {
  const name =
    f.key('cni.dev/valid-attachments') !== undefined
      ? 'cni.dev/valid-attachments'
      : f.key('cni.dev/attachments') !== undefined
        ? 'cni.dev/attachments'
        : undefined;
  if (name === undefined) {
    // containernetworking/cni libcni/api.go GCNetworkList: without GC arguments from the runtime, libcni DELs every
    // attachment it has cached for the network and then sends GC with neither key. Its meaning is "no attachment
    // is valid", and that is how it is read here.
    warnings.push(
      'GC without "cni.dev/valid-attachments": as libcni means it, no attachment of this network is valid; all are removed',
    );
    return [];
  }
  const list = f.array(name, 'a list of {containerID, ifname} objects') ?? [];
  return list.map((entry, i) => {
    const p = `${f.pathOf(name)}[${i}]`;
    if (!isPlainObject(entry)) throw f.invalid(p, 'an object {containerID, ifname}', entry);
    const a = f.nested(entry, p, false);
    const containerId = a.nonEmptyString('containerID');
    if (containerId === undefined) throw a.invalid(a.pathOf('containerID'), 'a non-empty string', undefined);
    const ifname = a.nonEmptyString('ifname');
    if (ifname === undefined) throw a.invalid(a.pathOf('ifname'), 'a non-empty string', undefined);
    return { containerId, ifname };
  });
}
