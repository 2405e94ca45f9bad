/**
 * Rendering the canonical objects in HNS's two schemas. v2 (HCN, a query with SchemaVersion.Major 2) writes enums
 * as names, omits zero-valued enums and flags (a NAT network has no Type, hcsshim hcnnetwork.go) and empty lists;
 * v1 (HNSCall, and HCN queries with Major 1, no SchemaVersion or a NULL query) writes lowercase network types,
 * Subnets/MacPools, flat policies and its bookkeeping fields with zeros included (field names: microsoft/hcsshim
 * internal/hns/hnsnetwork.go and hnsendpoint.go, the v1 structs; the exact field set and the zeros are our
 * reconstruction, not captured).
 */
import type { SimHost } from './control-types';
import type { Obj } from './json-doc';
import {
  subnetGateway,
  type Dns,
  type EndpointObj,
  type NamespaceObj,
  type NetworkObj,
  type ObjectKind,
  type Route,
} from './model';
import { policyToV1, policyToV2 } from './policies';
import type { Store } from './store';

export type Schema = 'v1' | 'v2';

/** HNS's fake FILETIME for Health.LastUpdateTime: 100 ns ticks since 1601. */
function filetime(ms = Date.now()): number {
  return (ms + 11644473600000) * 10000;
}

function omitEmpty(o: Obj): Obj {
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) delete o[k];
  }
  return o;
}

/** v1 output keeps empty lists and zeros (sample H: "Policies":[], "CurrentEndpointCount":0); only absent fields go. */
function omitUndefined(o: Obj): Obj {
  for (const [k, v] of Object.entries(o)) if (v === undefined) delete o[k];
  return o;
}

function routesV2(routes: Route[]): Obj[] {
  return routes.map((r) =>
    omitEmpty({ NextHop: r.nextHop, DestinationPrefix: r.destinationPrefix, Metric: r.metric || undefined }),
  );
}

function dnsV2(d: Dns): Obj | undefined {
  const o = omitEmpty({ Domain: d.domain, Search: d.search, ServerList: d.serverList, Options: d.options });
  return Object.keys(o).length > 0 ? o : undefined;
}

function schemaV2(sv: { major: number; minor: number }): Obj {
  return { Major: sv.major, Minor: sv.minor };
}

/**
 * The vSwitch a network sits on, which HNS shows as a network of its own: ncproxy resolves Health.Extra.SwitchGuid
 * with hcn.GetNetworkByID and reads the switch's name from it (microsoft/hcsshim cmd/ncproxy/hcn.go
 * hcnNetworkToNetworkResponse; its NAT-network tests in cmd/ncproxy/hcn_networking_test.go run against real HNS in
 * hcsshim's CI), and "HNS will create a transparent network for any external switch that is created not through
 * HNS" (same file, createHCNNetwork). A network whose switch HNS made for it shares the switch's id: an Overlay
 * network's v1 output with "ID":"9DD95ECE-…" and "SwitchGuid":"9DD95ECE-…" (rancher/rke2 issue 3925), in upper
 * case there. The simulator gives every network a switch of its own (no two networks share an adapter, see
 * networks.ts pickAdapter), so every type answers with its own id; for types other than Overlay and NAT that is our
 * reading of the sources above, not captured.
 */
export function switchGuid(n: NetworkObj): string {
  return n.id.toUpperCase();
}

/**
 * A namespace lists its endpoints in upper case whatever case they were created or attached with: ncproxy's
 * real-HNS test looks for strings.ToUpper(endpoint.Id) in hcn.GetNamespaceEndpointIds (microsoft/hcsshim
 * cmd/ncproxy/hcn_networking_test.go TestAddEndpoint_NoError and cmd/ncproxy/ncproxy_v0_service_test.go
 * TestAddEndpoint_V0_NoError, compared with == in cmd/ncproxy/utilities_test.go exists), and so does the plugin test
 * suite of microsoft/windows-container-networking (test/utilities/plugin_testing.go verifyAddNamespaceProperties:
 * strings.Contains(Resources[0].Data, strings.ToUpper(endpoint.Id))). The v1 ResourceList is the
 * same stored list seen through HNSCall (v1 and v2 are two views of one store, microsoft/hcsshim
 * hcn/hcnv1schema_test.go), so it shows the same form; that v1 does so is our inference. Container resources keep
 * the caller's form (no source says otherwise).
 */
function resourcesOf(ns: NamespaceObj): Obj[] {
  return ns.resources.map((r) => ({ Type: r.type, Data: { Id: r.type === 'Endpoint' ? r.id.toUpperCase() : r.id } }));
}

// ---- networks ----------------------------------------------------------------------------------------------

export function networkV2(n: NetworkObj): Obj {
  return omitEmpty({
    ID: n.id,
    Name: n.name,
    Type: n.type === 'NAT' ? undefined : n.type,
    Policies: n.policies.map(policyToV2),
    MacPool: { Ranges: n.macPools.map((r) => ({ StartMacAddress: r.start, EndMacAddress: r.end })) },
    Dns: dnsV2(n.dns),
    Ipams:
      n.subnets.length > 0
        ? [
            {
              Type: n.ipamType,
              Subnets: n.subnets.map((s) =>
                omitEmpty({
                  IpAddressPrefix: s.prefix,
                  Policies: s.policies.map(policyToV2),
                  Routes: routesV2(s.routes),
                }),
              ),
            },
          ]
        : undefined,
    Flags: n.flags || undefined,
    Health: { Extra: { LayeredOn: n.layeredOn, SwitchGuid: switchGuid(n) } },
    SchemaVersion: schemaV2(n.schemaVersion),
  });
}

export function networkV1(n: NetworkObj, store: Store, host: Pick<SimHost, 'adapters'>): Obj {
  const endpoints = store.endpointsOf(n.id).length;
  const adapter = n.adapter ? host.adapters.find((a) => a.Name === n.adapter) : undefined;
  const automaticDns = n.policies.some((p) => p.type === 'AutomaticDNS' && p.settings.Enable === true);
  return omitUndefined({
    ActivityId: n.activityId,
    AutomaticDNS: automaticDns || undefined,
    CurrentEndpointCount: endpoints,
    DNSServerList: n.dns.serverList.join(',') || undefined,
    DNSSuffix: n.dns.domain,
    Extensions: [] as unknown[],
    Flags: n.flags,
    Health: { LastErrorCode: 0, LastUpdateTime: filetime() },
    ID: n.id,
    IPv6: false,
    LayeredOn: n.layeredOn,
    MacPools: n.macPools.map((r) => ({ EndMacAddress: r.end, StartMacAddress: r.start })),
    ManagementIP: n.managementIp,
    Name: n.name,
    NatName: n.type === 'NAT' ? `NAT${n.layeredOn}` : undefined,
    NetworkAdapterName: n.adapter,
    // The NIC's own MAC: how a caller maps a delegated NIC to the network holding it.
    SourceMac: n.adapterMac ?? adapter?.MacAddress,
    Policies: n.policies.filter((p) => p.type !== 'NetAdapterName' && p.type !== 'AutomaticDNS').map(policyToV1),
    State: 1,
    Subnets: n.subnets.map((s) =>
      omitUndefined({
        AddressPrefix: s.prefix,
        GatewayAddress: subnetGateway(s),
        ID: s.id,
        Policies: s.policies.map(policyToV1),
      }),
    ),
    // v1 shows it at the top level (rancher/rke2 issue 3925's v1 network list).
    SwitchGuid: switchGuid(n),
    TotalEndpoints: endpoints,
    Type: n.type.toLowerCase(),
    Version: n.version,
  });
}

// ---- endpoints ---------------------------------------------------------------------------------------------

export function endpointV2(e: EndpointObj): Obj {
  return omitEmpty({
    ID: e.id,
    Name: e.name,
    HostComputeNetwork: e.networkId,
    HostComputeNamespace: e.namespaceId,
    Policies: e.policies.map(policyToV2),
    IpConfigurations: [
      ...(e.ipAddress ? [{ IpAddress: e.ipAddress, PrefixLength: e.prefixLength }] : []),
      ...(e.ip6Address ? [{ IpAddress: e.ip6Address, PrefixLength: e.ip6PrefixLength }] : []),
    ],
    Dns: dnsV2(e.dns),
    Routes: routesV2(e.routes),
    MacAddress: e.macAddress,
    Flags: e.flags || undefined,
    SchemaVersion: schemaV2(e.schemaVersion),
  });
}

export function endpointV1(e: EndpointObj, store: Store): Obj {
  const network = store.networks.get(e.networkId.toLowerCase());
  const ns = e.namespaceId ? store.namespaces.get(e.namespaceId.toLowerCase()) : undefined;
  return omitUndefined({
    ID: e.id,
    Name: e.name,
    VirtualNetwork: e.networkId,
    VirtualNetworkName: network?.name,
    Policies: e.policies.map(policyToV1),
    MacAddress: e.macAddress,
    IPAddress: e.ipAddress,
    PrefixLength: e.prefixLength,
    GatewayAddress: e.routes.find((r) => r.destinationPrefix === '0.0.0.0/0')?.nextHop,
    // v1's IPv6 fields (microsoft/hcsshim internal/hns/hnsendpoint.go HNSEndpoint), shown for an endpoint that has an
    // IPv6 address; that HNS fills them for an endpoint created through HCN is our assumption.
    IPv6Address: e.ip6Address,
    IPv6PrefixLength: e.ip6PrefixLength,
    GatewayAddressV6: e.routes.find((r) => r.destinationPrefix === '::/0')?.nextHop,
    DNSSuffix: e.dns.search.join(',') || undefined,
    DNSServerList: e.dns.serverList.join(',') || undefined,
    DNSDomain: e.dns.domain,
    EnableInternalDNS: false,
    DisableICC: (e.flags & 2) !== 0,
    IsRemoteEndpoint: (e.flags & 1) !== 0,
    EnableLowMetric: (e.flags & 8) !== 0,
    Namespace: ns ? { ID: ns.id, IsDefault: ns.type === 'HostDefault' } : undefined,
    SharedContainers: [...e.sharedContainers],
    State: e.state,
    Version: e.version,
  });
}

// ---- namespaces --------------------------------------------------------------------------------------------

export function namespaceV2(ns: NamespaceObj): Obj {
  return omitEmpty({
    ID: ns.id,
    NamespaceId: ns.namespaceId,
    Type: ns.type === 'Host' ? undefined : ns.type,
    Resources: resourcesOf(ns),
    SchemaVersion: schemaV2(ns.schemaVersion),
  });
}

export function namespaceV1(ns: NamespaceObj): Obj {
  return {
    ID: ns.id,
    IsDefault: ns.type === 'HostDefault',
    ResourceList: resourcesOf(ns),
    CompartmentId: ns.namespaceId,
  };
}

// ---- by kind -----------------------------------------------------------------------------------------------

export function view(kind: ObjectKind, id: string, schema: Schema, store: Store, host: Pick<SimHost, 'adapters'>): Obj {
  if (kind === 'network') {
    const n = store.network(id);
    return schema === 'v2' ? networkV2(n) : networkV1(n, store, host);
  }
  if (kind === 'endpoint') {
    const e = store.endpoint(id);
    return schema === 'v2' ? endpointV2(e) : endpointV1(e, store);
  }
  const ns = store.namespace(id);
  return schema === 'v2' ? namespaceV2(ns) : namespaceV1(ns);
}
