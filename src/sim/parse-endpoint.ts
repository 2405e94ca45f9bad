/**
 * Endpoint settings, v1 or v2, into one input record. Address and MAC problems that depend on the network
 * (outside every subnet, already held) are checked at commit (endpoints.ts); here only the shape is.
 */
import { HR } from '../hns/hresults';
import { normalizeMac } from '../net/mac';
import {
  commaList,
  isObj,
  isV2Doc,
  optArray,
  optBool,
  optNumber,
  optString,
  schemaVersionOf,
  type Obj,
  type SchemaVersion,
} from './json-doc';
import { EndpointFlags, emptyDns, type Dns, type Policy, type Route } from './model';
import { parseV2Dns } from './parse-network';
import { parsePolicies } from './policies';
import { fail } from './sim-error';
import { canonicalIp, parseIp } from '../net/addr';

const HCN_E_INVALID_PREFIX = 0x803b0030;

export interface EndpointInput {
  id?: string;
  name: string;
  /** Network named inside the settings (v2 HostComputeNetwork, v1 VirtualNetwork / VirtualNetworkName). */
  networkId?: string;
  networkName?: string;
  /** Requested IPv4 address (v2 IpConfigurations, v1 IPAddress). */
  ipAddress?: string;
  prefixLength?: number;
  /** Requested IPv6 address (v2 IpConfigurations). */
  ip6Address?: string;
  ip6PrefixLength?: number;
  macAddress?: string;
  policies: Policy[];
  dns: Dns;
  routes: Route[];
  flags: number;
  schemaVersion: SchemaVersion;
}

const BAD = HR.INVALID_ENDPOINT;

export function parseEndpointInput(doc: Obj): EndpointInput {
  return isV2Doc(doc) ? parseV2(doc) : parseV1(doc);
}

function endpointMac(doc: Obj): string | undefined {
  const raw = optString(doc, 'MacAddress', BAD);
  if (!raw) return undefined;
  return normalizeMac(raw, 'separated') ?? fail(BAD, `MAC address ${raw}`);
}

/**
 * IpConfigurations: at most one address per family — "HNS currently supports one IP address and one IPv6 address per
 * endpoint" (Azure/azure-container-networking network/endpoint_windows.go); sdnbridge sends one of each
 * (microsoft/windows-container-networking network/endpoint.go GetHostComputeEndpoint; "1 ipv4 and 1 ipv6 address per
 * endpoint", microsoft/windows-container-networking pull 61). What HNS answers for a second address of a family is not
 * public: HCN_E_INVALID_ENDPOINT ("invalid or missing parameters") is our assumption. An address that is no IP literal
 * is HCN_E_INVALID_IP ("IP address is either invalid or not part of any configured subnet(s)"). A prefix length wider
 * than the family (above /32, /128) is HCN_E_INVALID_PREFIX, "The prefix provided is invalid" (both descriptions:
 * MicrosoftDocs/Virtualization-Documentation virtualization/api/hcn/Reference/HCNHResult.md); which check raises that
 * code in HNS is not public, so this use of it is our assumption.
 */
function parseIpConfigurations(
  list: unknown[],
): Pick<EndpointInput, 'ipAddress' | 'prefixLength' | 'ip6Address' | 'ip6PrefixLength'> {
  const out: Pick<EndpointInput, 'ipAddress' | 'prefixLength' | 'ip6Address' | 'ip6PrefixLength'> = {};
  for (const c of list) {
    if (!isObj(c)) return fail(BAD, 'IpConfigurations entry is not an object');
    const address = optString(c, 'IpAddress', BAD) || undefined;
    const prefixLength = optNumber(c, 'PrefixLength', BAD);
    if (!address) continue;
    const ip = parseIp(address);
    if (!ip) return fail(HR.INVALID_IP, `IpAddress ${address}`);
    if (prefixLength !== undefined && (prefixLength < 0 || prefixLength > (ip.family === 4 ? 32 : 128))) {
      return fail(HCN_E_INVALID_PREFIX, `PrefixLength ${prefixLength} for ${address}`);
    }
    if (ip.family === 4) {
      if (out.ipAddress) return fail(BAD, `a second IPv4 address ${address} (an endpoint has one address per family)`);
      out.ipAddress = address;
      if (prefixLength !== undefined) out.prefixLength = prefixLength;
    } else {
      if (out.ip6Address) return fail(BAD, `a second IPv6 address ${address} (an endpoint has one address per family)`);
      out.ip6Address = canonicalIp(address);
      if (prefixLength !== undefined) out.ip6PrefixLength = prefixLength;
    }
  }
  return out;
}

function parseV2(doc: Obj): EndpointInput {
  const ipConfigs = optArray(doc, 'IpConfigurations', BAD);
  const routes = optArray(doc, 'Routes', BAD).map((r): Route => {
    if (!isObj(r)) return fail(BAD, 'route is not an object');
    const metric = optNumber(r, 'Metric', BAD);
    return {
      nextHop: optString(r, 'NextHop', BAD),
      destinationPrefix: optString(r, 'DestinationPrefix', BAD),
      ...(metric !== undefined ? { metric } : {}),
    };
  });
  return {
    id: optString(doc, 'ID', BAD),
    name: optString(doc, 'Name', BAD) ?? '',
    networkId: optString(doc, 'HostComputeNetwork', BAD) || undefined,
    ...parseIpConfigurations(ipConfigs),
    macAddress: endpointMac(doc),
    policies: parsePolicies(doc.Policies, 'v2', 'endpoint'),
    dns: parseV2Dns(doc.Dns, BAD),
    routes,
    flags: optNumber(doc, 'Flags', BAD) ?? 0,
    schemaVersion: schemaVersionOf(doc)!,
  };
}

function parseV1(doc: Obj): EndpointInput {
  const dns = emptyDns();
  dns.domain = optString(doc, 'DNSDomain', BAD) || undefined;
  dns.search = commaList(optString(doc, 'DNSSuffix', BAD));
  dns.serverList = commaList(optString(doc, 'DNSServerList', BAD));
  const gateway = optString(doc, 'GatewayAddress', BAD) || undefined;
  let flags = 0;
  if (optBool(doc, 'IsRemoteEndpoint', BAD)) flags |= EndpointFlags.RemoteEndpoint;
  if (optBool(doc, 'DisableICC', BAD)) flags |= EndpointFlags.DisableICC;
  if (optBool(doc, 'EnableLowMetric', BAD)) flags |= EndpointFlags.EnableLowInterfaceMetric;
  return {
    id: optString(doc, 'ID', BAD),
    name: optString(doc, 'Name', BAD) ?? '',
    networkId: optString(doc, 'VirtualNetwork', BAD) || undefined,
    networkName: optString(doc, 'VirtualNetworkName', BAD) || undefined,
    ipAddress: optString(doc, 'IPAddress', BAD) || undefined,
    prefixLength: optNumber(doc, 'PrefixLength', BAD) || undefined,
    macAddress: endpointMac(doc),
    policies: parsePolicies(doc.Policies, 'v1', 'endpoint'),
    dns,
    routes: gateway ? [{ nextHop: gateway, destinationPrefix: '0.0.0.0/0' }] : [],
    flags,
    schemaVersion: { major: 2, minor: 0 },
  };
}
