/**
 * Endpoint settings, v1 or v2, into one input record. Address and MAC problems that depend on the network
 * (outside every subnet, already held) are checked at commit (store.ts); here only the shape is.
 */
import { HR } from '../hns/hresults';
import { normalizeMac } from './mac';
import { commaList, isObj, isV2Doc, optArray, optBool, optNumber, optString, schemaVersionOf, type Obj, type SchemaVersion } from './json-doc';
import { EndpointFlags, emptyDns, type Dns, type Policy, type Route } from './model';
import { parseV2Dns } from './parse-network';
import { parsePolicies } from './policies';
import { fail } from './sim-error';

export interface EndpointInput {
  id?: string;
  name: string;
  /** Network named inside the settings (v2 HostComputeNetwork, v1 VirtualNetwork / VirtualNetworkName). */
  networkId?: string;
  networkName?: string;
  ipAddress?: string;
  prefixLength?: number;
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

function parseMac(doc: Obj): string | undefined {
  const raw = optString(doc, 'MacAddress', BAD);
  if (!raw) return undefined;
  return normalizeMac(raw) ?? fail(BAD, `MAC address ${raw}`);
}

function parseV2(doc: Obj): EndpointInput {
  const ipConfigs = optArray(doc, 'IpConfigurations', BAD);
  const first = ipConfigs[0];
  if (first !== undefined && !isObj(first)) fail(BAD, 'IpConfigurations entry is not an object');
  const routes = optArray(doc, 'Routes', BAD).map((r): Route => {
    if (!isObj(r)) return fail(BAD, 'route is not an object');
    const metric = optNumber(r, 'Metric', BAD);
    return { nextHop: optString(r, 'NextHop', BAD), destinationPrefix: optString(r, 'DestinationPrefix', BAD), ...(metric !== undefined ? { metric } : {}) };
  });
  return {
    id: optString(doc, 'ID', BAD),
    name: optString(doc, 'Name', BAD) ?? '',
    networkId: optString(doc, 'HostComputeNetwork', BAD) || undefined,
    ipAddress: first ? optString(first, 'IpAddress', BAD) || undefined : undefined,
    prefixLength: first ? optNumber(first, 'PrefixLength', BAD) : undefined,
    macAddress: parseMac(doc),
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
    macAddress: parseMac(doc),
    policies: parsePolicies(doc.Policies, 'v1', 'endpoint'),
    dns,
    routes: gateway ? [{ nextHop: gateway, destinationPrefix: '0.0.0.0/0' }] : [],
    flags,
    schemaVersion: { major: 2, minor: 0 },
  };
}
