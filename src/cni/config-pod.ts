/**
 * The pod's keys: IPAM (a delegated plugin, looked up on CNI_PATH only), DNS, the HNS policies in the incumbents'
 * shapes (Azure/sdnbridge AdditionalArgs, win-bridge policies), the runtime's capabilities (port mappings, DNS, MAC),
 * the previous result, and GC's list of valid attachments. Part of parseNetConf (config.ts).
 */
import { oneOf } from './config-read';
import { Fields, invalidConfig, invalidConfigMsg, isPlainObject, describeValue } from './fields';
import { formatMacDash, parseIp, parseMac, unicastMacProblem } from '../net/addr';
import { parsePrevResult } from './result';
import type { Attachment, Dns, NetConf, PortMapping, RawPolicy, RuntimeDns } from './types';

const PROTOCOLS: readonly PortMapping['protocol'][] = ['tcp', 'udp', 'sctp'];

export interface PodSettings {
  policies: Pick<NetConf, 'dns' | 'endpointPolicies' | 'networkPolicies'>;
  runtime: RuntimeSettings;
  optional: Pick<NetConf, 'ipam' | 'runtimeDns' | 'runtimeMac' | 'prevResult'>;
}

/** What the pod gets: IPAM, DNS, HNS policies, the runtime's capabilities, the previous result. */
export function readPodSettings(f: Fields, warnings: string[], ipamSubnetUsed: boolean): PodSettings {
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
export function parseAttachments(f: Fields, warnings: string[]): Attachment[] {
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
