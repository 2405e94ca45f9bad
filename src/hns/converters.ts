/**
 * HNS's documents read into the views the plugin works with (api-types.ts): HCN's (v2) and HNSCall's (v1) network and
 * endpoint, each field as the two APIs spell it.
 */
import { defaultRoute, familyOf } from '../net/ipv4';
// MACs from HNS in one form ("AA-BB-CC-DD-EE-FF"), so comparisons never depend on who formatted them.
import { normalizeMac } from '../net/mac';
import type { EndpointInfo, EndpointIp, EndpointListing, NetworkInfo, SubnetInfo } from './api-types';
import type { HnsV1Endpoint, HnsV1Network, HostComputeEndpoint, HostComputeNetwork } from './schema';

const CANONICAL_TYPES = ['NAT', 'ICS', 'Transparent', 'L2Bridge', 'L2Tunnel', 'Overlay', 'Private', 'Internal'];
const BY_LOWER = new Map(CANONICAL_TYPES.map((t) => [t.toLowerCase(), t]));

export function canonicalType(t: unknown): string {
  // HNS omits a zero-valued enum, and NAT is zero: no Type means NAT (hcsshim presets it for the same reason).
  if (t === undefined || t === null || t === '') return 'NAT';
  return BY_LOWER.get(String(t).toLowerCase()) ?? String(t);
}

function defaultRoutePrefix(prefix: string): boolean {
  return prefix === '0.0.0.0/0' || prefix === '::/0';
}

/** The next hop of the default route of one family (hcsshim hcn/hcnnetwork.go reads both 0.0.0.0/0 and ::/0). */
function defaultGateway(
  routes: Array<{ NextHop?: string; DestinationPrefix: string }> | undefined,
  family: 4 | 6,
): string | undefined {
  return routes?.find((r) => r.DestinationPrefix === defaultRoute(family) && r.NextHop)?.NextHop;
}

// ---- v2 ----

export function networkFromV2(n: HostComputeNetwork): NetworkInfo {
  const adapter = n.Policies?.find((p) => p.Type === 'NetAdapterName')?.Settings?.NetworkAdapterName;
  const subnets: SubnetInfo[] = [];
  for (const ipam of n.Ipams ?? []) {
    for (const s of ipam.Subnets ?? []) {
      const gw = s.Routes?.find(
        (r) => defaultRoutePrefix(r.DestinationPrefix) && familyOf(r.DestinationPrefix) === familyOf(s.IpAddressPrefix),
      )?.NextHop;
      subnets.push(gw ? { prefix: s.IpAddressPrefix, gateway: gw } : { prefix: s.IpAddressPrefix });
    }
  }
  return {
    id: String(n.ID ?? ''),
    name: String(n.Name ?? ''),
    type: canonicalType(n.Type),
    flags: Number(n.Flags ?? 0),
    adapterName: typeof adapter === 'string' ? adapter : undefined,
    subnets,
  };
}

export function endpointFromV2(e: HostComputeEndpoint): EndpointInfo {
  const gw = defaultGateway(e.Routes, 4);
  const gw6 = defaultGateway(e.Routes, 6);
  return {
    id: String(e.ID ?? ''),
    name: String(e.Name ?? ''),
    networkId: String(e.HostComputeNetwork ?? ''),
    mac: normalizeMac(e.MacAddress),
    ips: (e.IpConfigurations ?? []).map((c) =>
      c.PrefixLength !== undefined ? { address: c.IpAddress, prefixLength: c.PrefixLength } : { address: c.IpAddress },
    ),
    gateway: gw,
    ...(gw6 ? { gateway6: gw6 } : {}),
    namespaceId: e.HostComputeNamespace || undefined,
  };
}

// ---- v1 ----

export function networkFromV1(n: HnsV1Network): NetworkInfo {
  return {
    id: String(n.ID ?? ''),
    name: String(n.Name ?? ''),
    type: canonicalType(n.Type),
    flags: Number(n.Flags ?? 0),
    adapterName: n.NetworkAdapterName || undefined,
    ...(normalizeMac(n.SourceMac) ? { sourceMac: normalizeMac(n.SourceMac) } : {}),
    subnets: (n.Subnets ?? []).map((s) =>
      s.GatewayAddress ? { prefix: s.AddressPrefix, gateway: s.GatewayAddress } : { prefix: s.AddressPrefix },
    ),
    ...(typeof n.ManagementIP === 'string' && n.ManagementIP !== '' ? { managementIp: n.ManagementIP } : {}),
  };
}

export function endpointFromV1(e: HnsV1Endpoint): EndpointInfo {
  const ips: EndpointIp[] = e.IPAddress
    ? [e.PrefixLength !== undefined ? { address: e.IPAddress, prefixLength: e.PrefixLength } : { address: e.IPAddress }]
    : [];
  // v1 shows an endpoint's IPv6 address in fields of its own (microsoft/hcsshim internal/hns/hnsendpoint.go).
  if (e.IPv6Address)
    ips.push(
      e.IPv6PrefixLength ? { address: e.IPv6Address, prefixLength: e.IPv6PrefixLength } : { address: e.IPv6Address },
    );
  return {
    id: String(e.ID ?? ''),
    name: String(e.Name ?? ''),
    networkId: String(e.VirtualNetwork ?? ''),
    mac: normalizeMac(e.MacAddress),
    ips,
    gateway: e.GatewayAddress || undefined,
    ...(e.GatewayAddressV6 ? { gateway6: e.GatewayAddressV6 } : {}),
    namespaceId: e.Namespace?.ID || undefined,
    ...(e.SharedContainers?.length ? { containers: e.SharedContainers.map(String) } : {}),
    ...(typeof e.State === 'number' ? { state: e.State } : {}),
  };
}

/** The endpoints of a listing, whichever view it was made through. */
export function endpointsOfListing(listing: EndpointListing): EndpointInfo[] {
  return listing.view === 1 ? listing.docs.map(endpointFromV1) : listing.docs.map(endpointFromV2);
}
