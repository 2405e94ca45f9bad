/**
 * The network's keys: where the pod goes (mode, HNS API, network name and type, adapter), whether the plugin creates
 * the network and with which subnets and gateways (dual-stack: one per family), the endpoint's settings, and the
 * limits with their incumbents' aliases (Azure's windowsSettings, sdnbridge's optionalFlags). Part of parseNetConf
 * (config.ts); a plain key is one line here, a custom one a function of its own.
 */
import { DEFAULTS } from './config-keys';
import { agree, readSetting, setting } from './config-read';
import { Fields, invalidConfig, invalidConfigMsg, isPlainObject } from './fields';
import { formatIp, parseCidr, parseIp, parseIpv4, parseIpv4Cidr } from '../net/addr';
import { firstHost } from '../net/ipv4';
import type { ApiVersionSetting, NetConf, SubnetConf } from './types';

export type Placement = Pick<
  NetConf,
  'mode' | 'apiVersion' | 'networkName' | 'networkType' | 'networkTypeSet' | 'adapterName'
>;

/** Where the pod goes: the mode, the HNS API, and the network (its name, its type, the adapter it binds). */
export function readPlacement(f: Fields, name: string): Placement {
  const mode = setting(f, 'mode');
  const apiVersion = parseApiVersion(f);
  const networkName = hnsNetworkName(f) ?? name;
  const givenType = readSetting(f, 'networkType');
  const networkType = givenType ?? DEFAULTS.networkType;
  const adapterName = parseAdapterName(f);
  return { mode, apiVersion, networkName, networkType, networkTypeSet: givenType !== undefined, adapterName };
}

export interface Creation {
  createNetwork: boolean;
  createNetworkFromMaster: boolean;
  subnets: SubnetConf[];
  /** sdnbridge's ipam.subnet stands in for the IPv4 subnet. */
  subnetFromIpam: boolean;
}

/** Whether the plugin creates the network, and the subnets (and gateways) it is created with or expected to have. */
export function readCreation(f: Fields, mode: NetConf['mode'], warnings: string[]): Creation {
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
export function readEndpointSettings(f: Fields): Pick<NetConf, 'mtu' | 'ipMasq' | 'endpointMacPrefix'> {
  const mtu = readSetting(f, 'mtu');
  // win-overlay's meaning (containernetworking/plugins plugins/main/windows/win-overlay): the network's subnet is not
  // source-NATed (an OutBoundNAT exception), everything else is.
  const ipMasq = setting(f, 'ipMasq');
  return { mtu, ipMasq, endpointMacPrefix: parseMacPrefix(f) };
}

export type Limits = Pick<
  NetConf,
  'loopbackDSR' | 'hnsTimeoutSeconds' | 'ipamTimeoutSeconds' | 'outboundNatExceptions'
>;

/** Azure's windowsSettings and sdnbridge's optionalFlags with their aliases, the time limits, the NAT exceptions. */
export function readLimits(f: Fields, warnings: string[]): Limits {
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
