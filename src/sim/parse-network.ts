/**
 * Network settings, v1 or v2, into one input record. Validation here is what HNS rejects before it touches the
 * host: unknown type (0x803B000B), malformed subnet (0x803B0032), bad gateway or missing subnet (0x803B000A),
 * bad policies (0x803B000D/E). What depends on the host (adapters, names, ids) is checked at commit (networks.ts).
 */
import { HR } from '../hns/hresults';
import { isIpv4, isIpv6 } from '../net/addr';
import { defaultRoute } from '../net/ipv4';
import { parsePrefix, cidrContains, isNetworkOrBroadcast, isIpOrCidr } from './prefix';
import { normalizeMac } from '../net/mac';
import { macToInt, type MacRange } from './mac';
import {
  commaList,
  enumValue,
  isObj,
  isV2Doc,
  optArray,
  optBool,
  optNumber,
  optString,
  schemaVersionOf,
  stringList,
  type Obj,
  type SchemaVersion,
} from './json-doc';
import {
  NETWORK_TYPES,
  NetworkFlags,
  SUBNET_REQUIRED_TYPES,
  emptyDns,
  type Dns,
  type NetworkType,
  type Policy,
  type Route,
} from './model';
import { parsePolicies } from './policies';
import { fail } from './sim-error';

export interface SubnetInput {
  prefix: string;
  routes: Route[];
  policies: Policy[];
}

export interface NetworkInput {
  /** ID carried inside the settings (used when the call's id is GUID_NULL). */
  id?: string;
  name: string;
  type: NetworkType;
  flags: number;
  policies: Policy[];
  ipamType: 'Static' | 'Dhcp';
  subnets: SubnetInput[];
  macPools: MacRange[];
  dns: Dns;
  managementIp?: string;
  schemaVersion: SchemaVersion;
  /** Adapter the caller asked for (NetAdapterName policy / v1 NetworkAdapterName). */
  adapterName?: string;
}

const BAD = HR.INVALID_NETWORK;

export function parseNetworkType(v: unknown): NetworkType {
  if (v === undefined || v === null) return 'NAT'; // the zero value: what HNS makes of an absent Type
  return enumValue(v, NETWORK_TYPES) ?? fail(HR.INVALID_NETWORK_TYPE, `network type ${JSON.stringify(v)}`);
}

export function parseNetworkInput(doc: Obj): NetworkInput {
  return isV2Doc(doc) ? parseV2(doc) : parseV1(doc);
}

function parseV2(doc: Obj): NetworkInput {
  const policies = parsePolicies(doc.Policies, 'v2', 'network');
  const ipams = optArray(doc, 'Ipams', BAD);
  const subnets: SubnetInput[] = [];
  let ipamType: 'Static' | 'Dhcp' = 'Static';
  for (const ipam of ipams) {
    if (!isObj(ipam)) fail(BAD, 'Ipams entry is not an object');
    if (ipam.Type !== undefined)
      ipamType = enumValue(ipam.Type, ['Static', 'Dhcp'] as const) ?? fail(BAD, `Ipam type ${String(ipam.Type)}`);
    for (const s of optArray(ipam, 'Subnets', HR.INVALID_SUBNET)) subnets.push(parseV2Subnet(s));
  }
  return finish({
    id: optString(doc, 'ID', BAD),
    name: optString(doc, 'Name', BAD) ?? '',
    type: parseNetworkType(doc.Type),
    flags: optNumber(doc, 'Flags', BAD) ?? 0,
    policies,
    ipamType,
    subnets,
    macPools: parseMacPools(isObj(doc.MacPool) ? optArray(doc.MacPool, 'Ranges', BAD) : []),
    dns: parseV2Dns(doc.Dns, BAD),
    schemaVersion: schemaVersionOf(doc)!,
  });
}

function parseV1(doc: Obj): NetworkInput {
  const policies = parsePolicies(doc.Policies, 'v1', 'network');
  const subnets = optArray(doc, 'Subnets', HR.INVALID_SUBNET).map(parseV1Subnet);
  const adapterName = optString(doc, 'NetworkAdapterName', BAD) || undefined;
  // v1's top-level NetworkAdapterName is v2's NetAdapterName policy: keep one canonical form.
  if (adapterName && !policies.some((p) => p.type === 'NetAdapterName')) {
    policies.unshift({ type: 'NetAdapterName', settings: { NetworkAdapterName: adapterName } });
  }
  if (optBool(doc, 'AutomaticDNS', BAD)) policies.push({ type: 'AutomaticDNS', settings: { Enable: true } });
  let flags = optNumber(doc, 'Flags', BAD) ?? 0;
  if (optBool(doc, 'IsolateSwitch', BAD)) flags |= NetworkFlags.IsolateVSwitch;
  const dns = emptyDns();
  dns.domain = optString(doc, 'DNSSuffix', BAD) || undefined;
  dns.serverList = commaList(optString(doc, 'DNSServerList', BAD));
  return finish({
    id: optString(doc, 'ID', BAD),
    name: optString(doc, 'Name', BAD) ?? '',
    type: parseNetworkType(doc.Type),
    flags,
    policies,
    ipamType: 'Static',
    subnets,
    macPools: parseMacPools(optArray(doc, 'MacPools', BAD)),
    dns,
    managementIp: optString(doc, 'ManagementIP', BAD) || undefined,
    schemaVersion: { major: 2, minor: 0 },
  });
}

function finish(input: NetworkInput): NetworkInput {
  input.adapterName = input.policies.find((p) => p.type === 'NetAdapterName')?.settings.NetworkAdapterName as
    string | undefined;
  if (SUBNET_REQUIRED_TYPES.has(input.type) && input.subnets.length === 0) {
    fail(BAD, `${input.type} network without a subnet`);
  }
  return input;
}

function parseV2Subnet(raw: unknown): SubnetInput {
  if (!isObj(raw)) return fail(HR.INVALID_SUBNET, 'subnet is not an object');
  const prefix = raw.IpAddressPrefix;
  const cidr = parsePrefix(prefix);
  if (!cidr) return fail(HR.INVALID_SUBNET, `subnet prefix ${JSON.stringify(prefix)}`);
  const routes = optArray(raw, 'Routes', BAD).map((r): Route => {
    if (!isObj(r)) return fail(BAD, 'route is not an object');
    const nextHop = optString(r, 'NextHop', BAD);
    const destinationPrefix = optString(r, 'DestinationPrefix', BAD);
    if (nextHop !== undefined && !isIpv4(nextHop) && !isIpv6(nextHop)) fail(BAD, `route next hop ${nextHop}`);
    if (destinationPrefix !== undefined && !isIpOrCidr(destinationPrefix))
      fail(BAD, `route destination ${destinationPrefix}`);
    const metric = optNumber(r, 'Metric', BAD);
    return { nextHop, destinationPrefix, ...(metric !== undefined ? { metric } : {}) };
  });
  const gateway = routes.find((r) => r.destinationPrefix === defaultRoute(cidr.family))?.nextHop;
  checkGateway(cidr.text, gateway);
  return { prefix: cidr.text, routes, policies: parsePolicies(raw.Policies, 'v2', 'subnet') };
}

function parseV1Subnet(raw: unknown): SubnetInput {
  if (!isObj(raw)) return fail(HR.INVALID_SUBNET, 'subnet is not an object');
  const cidr = parsePrefix(raw.AddressPrefix);
  if (!cidr) return fail(HR.INVALID_SUBNET, `subnet prefix ${JSON.stringify(raw.AddressPrefix)}`);
  const gateway = optString(raw, 'GatewayAddress', BAD) || undefined;
  checkGateway(cidr.text, gateway);
  return {
    prefix: cidr.text,
    routes: gateway ? [{ nextHop: gateway, destinationPrefix: cidr.family === 6 ? '::/0' : '0.0.0.0/0' }] : [],
    policies: parsePolicies(raw.Policies, 'v1', 'subnet'),
  };
}

/** A gateway must be an address of its subnet, and neither its network nor its broadcast address. */
function checkGateway(prefix: string, gateway: string | undefined): void {
  if (gateway === undefined) return;
  const cidr = parsePrefix(prefix)!;
  // An IPv6 subnet may route through a link-local next hop: Azure CNI gives its IPv6 subnets the gateway
  // fe80::1234:5678:9abc (Azure/azure-container-networking cni/network/invoker_cns.go overlayGatewayV6IP, made the
  // subnet's gateway in cni/network/network.go addSubnetToEndpointInfo and its route's NextHop in
  // network/network_windows.go), so HNS takes one.
  if (cidr.family === 6 && cidrContains(LINK_LOCAL_V6, gateway)) return;
  // Otherwise the next hop must be a usable address of the subnet (for IPv6 our assumption, by analogy with IPv4).
  if (!cidrContains(cidr, gateway) || isNetworkOrBroadcast(cidr, gateway))
    fail(BAD, `gateway ${gateway} is not usable in ${prefix}`);
}

const LINK_LOCAL_V6 = parsePrefix('fe80::/10')!;

function parseMacPools(ranges: unknown[]): MacRange[] {
  return ranges.map((r) => {
    if (!isObj(r)) return fail(BAD, 'MAC range is not an object');
    const start = normalizeMac(r.StartMacAddress, 'separated');
    const end = normalizeMac(r.EndMacAddress, 'separated');
    if (!start || !end || macToInt(start) > macToInt(end)) {
      return fail(BAD, `MAC range ${JSON.stringify(r)}`);
    }
    return { start, end };
  });
}

export function parseV2Dns(raw: unknown, hr: number): Dns {
  if (raw === undefined || raw === null) return emptyDns();
  if (!isObj(raw)) return fail(hr, 'Dns is not an object');
  return {
    domain: optString(raw, 'Domain', hr) || undefined,
    search: stringList(raw.Search, hr, 'Dns.Search'),
    serverList: stringList(raw.ServerList, hr, 'Dns.ServerList'),
    options: stringList(raw.Options, hr, 'Dns.Options'),
  };
}
