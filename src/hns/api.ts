/**
 * One way to talk to HNS, whichever API the host offers. The plugin and the audit work with NetworkInfo and
 * EndpointInfo; V2Api does objects through HCN (computenetwork.dll), V1Api through HNSCall (vmcompute.dll).
 * Both hot-attach to a Docker-style container through HCS (HCN has no container attach), asking v1 first whether it
 * is attached, as hcsshim does; v1 and v2 are two views of one object store, so objects created through one are seen
 * by the other. The operations that only one API or HCS offers live here too (HostOps), so the plugin never talks
 * to the facade below.
 */
import { defaultRoute, familyOf } from '../net/ipv4';
// MACs from HNS in one form ("AA-BB-CC-DD-EE-FF"), so comparisons never depend on who formatted them.
import { normalizeMac } from '../net/mac';
import { hasCode, isComputeSystemMissing, isNotFound } from './hcn-error';
import { HR } from './hresults';
import type { HnsVersion } from './features';
import type { Hcn, HostAdapter } from './hcn';
import type { HeldHandles } from './held-handles';
import { PolicyError, render } from './policies';
import type {
  HnsV1Endpoint,
  HnsV1Network,
  HostComputeEndpoint,
  HostComputeNetwork,
  NetworkMode,
  TypedPolicy,
} from './schema';

export type ApiVersion = 1 | 2;

export interface SubnetInfo {
  prefix: string;
  gateway?: string;
}

export interface NetworkInfo {
  id: string;
  name: string;
  /** Canonical case: L2Bridge, Transparent, NAT, Overlay, L2Tunnel, ICS, Private, Internal. */
  type: string;
  flags: number;
  /** The host adapter the network binds (NetAdapterName policy / NetworkAdapterName). */
  adapterName?: string;
  /** v1: the bound NIC's MAC (SourceMac), "AA-BB-CC-DD-EE-FF". */
  sourceMac?: string;
  subnets: SubnetInfo[];
  /** The host's address on an Overlay network (v1 ManagementIP; HCN's network document has no such field). */
  managementIp?: string;
}

export interface EndpointIp {
  address: string;
  prefixLength?: number;
}

export interface EndpointInfo {
  id: string;
  name: string;
  networkId: string;
  /** "AA-BB-CC-DD-EE-FF". */
  mac?: string;
  ips: EndpointIp[];
  /** Next hop of the IPv4 default route (0.0.0.0/0). */
  gateway?: string;
  /** Next hop of the IPv6 default route (::/0). */
  gateway6?: string;
  /** The HCN namespace it is in, if any. */
  namespaceId?: string;
  /** Containers it is attached to (v1 SharedContainers; the v2 view does not show them). */
  containers?: string[];
  /**
   * HNS's own lifecycle state, where the view shows one (v1 `State`): 1 Created, 2 Attached, 3 AttachedSharing,
   * 4 Detached, 5 Degraded, 6 Destroyed (microsoft/hcsshim internal/hns/hnsendpoint.go EndpointState).
   */
  state?: number;
}

export interface NetworkSpec {
  name: string;
  type: NetworkMode;
  flags: number;
  adapterName?: string;
  subnets: SubnetInfo[];
  policies: TypedPolicy[];
}

export interface EndpointSpec {
  name: string;
  ips: EndpointIp[];
  mac?: string;
  /** Default gateways, at most one per family: each becomes a default route of its family (0.0.0.0/0, ::/0). */
  gateways?: string[];
  /** options: resolver options (ndots:5); HCN's Dns has Options (hcsshim hcn/hcnnetwork.go Dns), v1 has none. */
  dns: { servers: string[]; search: string[]; domain?: string; options?: string[] };
  policies: TypedPolicy[];
}

export type DeleteOutcome = 'deleted' | 'not-found';

/** How a hot attach or detach ended. */
export type HotAttachOutcome = 'done' | 'already' | 'container-gone' | 'endpoint-gone';

export interface HnsApi extends HostOps {
  readonly version: ApiVersion;
  readonly hcn: Hcn;
  listNetworks(): Promise<NetworkInfo[]>;
  findNetworkByName(name: string): Promise<NetworkInfo | undefined>;
  getNetwork(id: string): Promise<NetworkInfo | undefined>;
  createNetwork(spec: NetworkSpec, id?: string): Promise<NetworkInfo>;
  deleteNetwork(id: string): Promise<DeleteOutcome>;
  listEndpoints(): Promise<EndpointInfo[]>;
  /**
   * The endpoints with this name, or on this network: HNS answers the query (HCN query filters, as microsoft/hcsshim
   * hcn/hcnendpoint.go GetEndpointByName and ListEndpointsOfNetwork build them), so the cost does not grow with the
   * node. HNS v1 has no filter: it lists.
   */
  findEndpoints(filter: { name: string } | { networkId: string }): Promise<EndpointInfo[]>;
  getEndpoint(id: string): Promise<EndpointInfo | undefined>;
  createEndpoint(network: NetworkInfo, spec: EndpointSpec, id?: string): Promise<EndpointInfo>;
  deleteEndpoint(id: string): Promise<DeleteOutcome>;
  /** Adds policies to an existing endpoint (HCN only: HcnModifyEndpoint, ResourceType Policy, RequestType Add). */
  addEndpointPolicies(id: string, policies: TypedPolicy[]): Promise<void>;
  attachNamespace(endpointId: string, namespaceId: string): Promise<void>;
  detachNamespace(endpointId: string, namespaceId: string): Promise<DeleteOutcome>;
  namespaceExists(namespaceId: string): Promise<boolean>;
}

/** What both APIs do the same way: HCS hot attach, v1-only reads, the host's adapters. */
export interface HostOps {
  /** Why hot attach cannot work on this host (HCS or HNSCall missing), or undefined when it can. */
  hotAttachUnavailable(): string | undefined;
  /**
   * hcsshim HotAttachEndpoint (hnsendpoint.go): IsAttached (v1 GET /endpoints/{id}, SharedContainers) and, when not
   * attached, HCS Open → Modify {"ResourceType":"Network","RequestType":"Add","Settings":"<endpoint id>"} → Close.
   * A compute system that does not exist rejects with the HCS error (see isComputeSystemMissing).
   */
  hotAttach(endpointId: string, containerId: string): Promise<HotAttachOutcome>;
  /** hcsshim HotDetachEndpoint: the same with "Remove"; a container or endpoint already gone counts as detached. */
  hotDetach(endpointId: string, containerId: string): Promise<HotAttachOutcome>;
  /** The containers an endpoint is attached to (v1 SharedContainers), or undefined when the endpoint is gone. */
  endpointContainers(endpointId: string): Promise<string[] | undefined>;
  /** Whether the namespace lists the endpoint (HCN), for views that do not show the namespace on the endpoint. */
  namespaceHasEndpoint(namespaceId: string, endpointId: string): Promise<boolean>;
  /** The endpoint ids, through the API that ADD uses (STATUS). */
  endpointIds(): Promise<string[]>;
  listAdapters(): Promise<HostAdapter[]>;
  /** HNS's version (v1 GET /globals/version, once per API and its views), or undefined where HNSCall is missing. */
  hnsVersion(): Promise<HnsVersion | undefined>;
  /** The same API over another facade (a request's own time limit), sharing what it has learnt of the host. */
  withHcn(hcn: Hcn): this;
}

// ---- shared helpers ----

const CANONICAL_TYPES = ['NAT', 'ICS', 'Transparent', 'L2Bridge', 'L2Tunnel', 'Overlay', 'Private', 'Internal'];
const BY_LOWER = new Map(CANONICAL_TYPES.map((t) => [t.toLowerCase(), t]));

export function canonicalType(t: unknown): string {
  // HNS omits a zero-valued enum, and NAT is zero: no Type means NAT (hcsshim presets it for the same reason).
  if (t === undefined || t === null || t === '') return 'NAT';
  return BY_LOWER.get(String(t).toLowerCase()) ?? String(t);
}

export function sameId(a: string | undefined, b: string | undefined): boolean {
  return !!a && !!b && a.toLowerCase() === b.toLowerCase();
}

async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * A detach that finds the endpoint no longer attached has nothing left to do, like one whose endpoint or namespace
 * is gone: another verb detached it first (a GC's audit racing the same pod's DEL). HNS answers that with
 * HCN_E_ENDPOINT_NOT_ATTACHED (MicrosoftDocs/Virtualization-Documentation virtualization/api/hcn/Reference/HCNHResult.md).
 */
/** v1 namespace attach: microsoft/hcsshim internal/hns/namespace.go AddNamespaceEndpoint. */
function addToNamespaceV1(hcn: Hcn, namespaceId: string, endpointId: string): Promise<unknown> {
  return hcn.hnsCall('POST', `/namespaces/${namespaceId}/addresource`, { Type: 'Endpoint', Data: { Id: endpointId } });
}

/** v1 namespace detach: microsoft/hcsshim internal/hns/namespace.go RemoveNamespaceEndpoint. */
function removeFromNamespaceV1(hcn: Hcn, namespaceId: string, endpointId: string): Promise<unknown> {
  return hcn.hnsCall('POST', `/namespaces/${namespaceId}/removeresource`, {
    Type: 'Endpoint',
    Data: { Id: endpointId },
  });
}

async function detachOutcome(p: Promise<unknown>): Promise<DeleteOutcome> {
  try {
    return await outcome(p);
  } catch (e) {
    if (hasCode(e, HR.ENDPOINT_NOT_ATTACHED)) return 'not-found';
    throw e;
  }
}

async function outcome(p: Promise<unknown>): Promise<DeleteOutcome> {
  try {
    await p;
    return 'deleted';
  } catch (e) {
    if (isNotFound(e)) return 'not-found';
    throw e;
  }
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

/**
 * How V2Api lists everything (the audit's hot path). HCN has no bulk query: listNetworksDetailed enumerates, then
 * opens and queries each object — 2N+1 calls into HNS. HNS v1 answers GET /networks/ and GET /endpoints/ with every
 * object in one call, and it is the same object store, so when HNSCall is there it is the faster listing (bench/
 * audit.bench.js measures both). 'hcn' forces the HCN listing.
 */
export type Listing = 'auto' | 'hcn' | 'v1';

abstract class HostOpsBase implements HostOps {
  constructor(readonly hcn: Hcn) {}

  hotAttachUnavailable(): string | undefined {
    const caps = this.hcn.capabilities;
    const missing = [
      ...(caps.hcsSupported ? [] : ['HcsOpenComputeSystem/HcsModifyComputeSystem/HcsCloseComputeSystem']),
      ...(caps.v1Supported ? [] : ['HNSCall']),
    ];
    return missing.length ? `${missing.join(' and ')} (vmcompute.dll)` : undefined;
  }

  async endpointContainers(endpointId: string): Promise<string[] | undefined> {
    const e = await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${endpointId}`));
    return e ? (e.SharedContainers ?? []).map(String) : undefined;
  }

  private async isAttachedTo(endpointId: string, containerId: string): Promise<boolean | undefined> {
    // hcsshim IsAttached: a case-insensitive containment test on SharedContainers.
    const containers = await this.endpointContainers(endpointId);
    return containers && containers.some((c) => c.toLowerCase().includes(containerId.toLowerCase()));
  }

  private async modifyContainer(
    endpointId: string,
    containerId: string,
    request: 'Add' | 'Remove',
  ): Promise<HotAttachOutcome> {
    try {
      await this.hcn.modifyComputeSystem(containerId, {
        ResourceType: 'Network',
        RequestType: request,
        Settings: endpointId,
      });
      return 'done';
    } catch (e) {
      if (request === 'Remove' && isComputeSystemMissing(e)) return 'container-gone';
      throw e;
    }
  }

  async hotAttach(endpointId: string, containerId: string): Promise<HotAttachOutcome> {
    const attached = await this.isAttachedTo(endpointId, containerId);
    if (attached === undefined) return 'endpoint-gone';
    if (attached) return 'already';
    return this.modifyContainer(endpointId, containerId, 'Add');
  }

  async hotDetach(endpointId: string, containerId: string): Promise<HotAttachOutcome> {
    const attached = await this.isAttachedTo(endpointId, containerId);
    if (attached === undefined) return 'endpoint-gone';
    if (!attached) return 'already';
    return this.modifyContainer(endpointId, containerId, 'Remove');
  }

  async namespaceHasEndpoint(namespaceId: string, endpointId: string): Promise<boolean> {
    if (!this.hcn.capabilities.v2Supported) return false;
    const ns = await orUndefined(this.hcn.getNamespace(namespaceId));
    return (ns?.Resources ?? []).some((r) => r.Type === 'Endpoint' && sameId(r.Data?.Id, endpointId));
  }

  abstract endpointIds(): Promise<string[]>;

  listAdapters(): Promise<HostAdapter[]> {
    return this.hcn.listAdapters();
  }

  /** What this API has learnt of the host, shared with every view made by withHcn. */
  private readonly learnt: { versionAnswer?: Promise<HnsVersion | undefined> } = {};
  hnsVersion(): Promise<HnsVersion | undefined> {
    const learnt = this.learnt;
    if (!learnt.versionAnswer) {
      const answer = this.hcn.capabilities.v1Supported ? this.hcn.version() : Promise.resolve(undefined);
      learnt.versionAnswer = answer;
      answer.catch(() => {
        if (learnt.versionAnswer === answer) delete learnt.versionAnswer;
      });
    }
    return learnt.versionAnswer;
  }

  /**
   * This API over another facade — a request's own HNS time limit in a resident service, where requests with
   * different hnsTimeoutSeconds run at once — sharing what the API has learnt of the host (its HNS version).
   */
  withHcn(hcn: Hcn): this {
    if (hcn === this.hcn) return this;
    return Object.create(this, { hcn: { value: hcn, enumerable: true } }) as this;
  }
}

export class V2Api extends HostOpsBase implements HnsApi {
  readonly version = 2 as const;
  /** Reads through HNSCall where HCN needs a call per object and v1 answers in one (docs/hns-round-trips.md). */
  private readonly bulkV1: boolean;
  /** HCN handles kept between verbs (the resident service: held-handles.ts); none in the standalone executable. */
  private readonly held: HeldHandles | undefined;
  constructor(hcn: Hcn, listing: Listing = 'auto', held?: HeldHandles) {
    super(hcn);
    this.bulkV1 = listing === 'v1' || (listing === 'auto' && hcn.capabilities.v1Supported);
    this.held = held;
  }

  /** HcnEnumerateEndpoints (ids only): the v2 listing may go through HNSCall, which answers where HCN does not. */
  endpointIds(): Promise<string[]> {
    return this.hcn.enumerateEndpoints();
  }

  async listNetworks(): Promise<NetworkInfo[]> {
    if (this.bulkV1) return ((await this.hcn.hnsCall<HnsV1Network[]>('GET', '/networks/')) ?? []).map(networkFromV1);
    return (await this.hcn.listNetworks()).map(networkFromV2);
  }
  async findNetworkByName(name: string): Promise<NetworkInfo | undefined> {
    // One HNSCall lists a node's few networks (pods are endpoints); HCN's filtered query is three calls (enumerate,
    // open, query).
    if (this.bulkV1) return (await this.listNetworks()).find((n) => n.name === name);
    const n = await this.hcn.findNetworkByName(name);
    return n ? networkFromV2(n) : undefined;
  }
  async getNetwork(id: string): Promise<NetworkInfo | undefined> {
    const n = await orUndefined(this.hcn.getNetwork(id));
    return n ? networkFromV2(n) : undefined;
  }
  async createNetwork(spec: NetworkSpec, id?: string): Promise<NetworkInfo> {
    const policies: TypedPolicy[] = [...spec.policies];
    if (spec.adapterName)
      policies.unshift({ Type: 'NetAdapterName', Settings: { NetworkAdapterName: spec.adapterName } });
    const settings: HostComputeNetwork = { Name: spec.name, Type: spec.type, Flags: spec.flags, Policies: policies };
    if (spec.subnets.length > 0) {
      settings.Ipams = [
        {
          Type: 'Static',
          Subnets: spec.subnets.map((s) => ({
            IpAddressPrefix: s.prefix,
            ...(s.gateway
              ? { Routes: [{ NextHop: s.gateway, DestinationPrefix: defaultRoute(familyOf(s.prefix) ?? 4) }] }
              : {}),
          })),
        },
      ];
    }
    return networkFromV2(await this.hcn.createNetwork(settings, id));
  }
  deleteNetwork(id: string): Promise<DeleteOutcome> {
    this.held?.forgetNetwork(this.hcn, id);
    return outcome(this.hcn.deleteNetwork(id));
  }
  async listEndpoints(): Promise<EndpointInfo[]> {
    if (this.bulkV1) return ((await this.hcn.hnsCall<HnsV1Endpoint[]>('GET', '/endpoints/')) ?? []).map(endpointFromV1);
    return (await this.hcn.listEndpoints()).map(endpointFromV2);
  }
  async findEndpoints(filter: { name: string } | { networkId: string }): Promise<EndpointInfo[]> {
    // The v1 field names: hcsshim's filters use Name and VirtualNetwork (HNS has no v2 key for the network).
    const ids = await this.hcn.enumerateEndpoints(
      'name' in filter ? { Name: filter.name } : { VirtualNetwork: filter.networkId },
    );
    const found: EndpointInfo[] = [];
    for (const id of ids) {
      // The v1 view where HNSCall exists: it shows SharedContainers (a hot-attached endpoint is in use), as the
      // audit's bulk listing does.
      const e = this.bulkV1
        ? await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${id}`)).then(
            (v) => v && endpointFromV1(v),
          )
        : await this.getEndpoint(id);
      if (e) found.push(e);
    }
    return found;
  }
  async getEndpoint(id: string): Promise<EndpointInfo | undefined> {
    const e = await orUndefined(this.hcn.getEndpoint(id));
    return e ? endpointFromV2(e) : undefined;
  }
  /**
   * HCN's create, three round trips: HcnCreateEndpoint takes an open network handle and answers only an error
   * record, so the endpoint's properties take a query of their own (microsoft/hcsshim hcn/hcnendpoint.go
   * createEndpoint: hcnOpenNetwork, hcnCreateEndpoint, hcnQueryEndpointProperties). With held handles (the resident
   * service, held-handles.ts) the network's handle is kept, and the create is two.
   */
  async createEndpoint(network: NetworkInfo, spec: EndpointSpec, id?: string): Promise<EndpointInfo> {
    const settings: HostComputeEndpoint = { Name: spec.name, Policies: spec.policies };
    if (spec.ips.length > 0)
      settings.IpConfigurations = spec.ips.map((ip) => ({ IpAddress: ip.address, PrefixLength: ip.prefixLength }));
    if (spec.mac) settings.MacAddress = spec.mac;
    // One default route per family, as sdnbridge writes them (microsoft/windows-container-networking network/endpoint.go).
    if (spec.gateways?.length)
      settings.Routes = spec.gateways.map((gw) => ({
        NextHop: gw,
        DestinationPrefix: defaultRoute(familyOf(gw) ?? 4),
      }));
    const dns = {
      ServerList: spec.dns.servers,
      Search: spec.dns.search,
      ...(spec.dns.domain ? { Domain: spec.dns.domain } : {}),
      ...(spec.dns.options?.length ? { Options: spec.dns.options } : {}),
    };
    if (dns.ServerList.length || dns.Search.length || dns.Domain || dns.Options) settings.Dns = dns;
    const created = this.held
      ? await this.held.createEndpoint(this.hcn, network.id, settings, id)
      : await this.hcn.createEndpoint(network.id, settings, id);
    return endpointFromV2(created);
  }
  deleteEndpoint(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.deleteEndpoint(id));
  }
  /** microsoft/hcsshim hcn/hcnendpoint.go ApplyPolicy: {"ResourceType":"Policy","RequestType":"Add","Settings":{"Policies":[…]}}. */
  async addEndpointPolicies(id: string, policies: TypedPolicy[]): Promise<void> {
    await this.hcn.modifyEndpoint(id, { ResourceType: 'Policy', RequestType: 'Add', Settings: { Policies: policies } });
  }
  /**
   * HcnOpenNamespace + HcnModifyNamespace (microsoft/hcsshim hcn/hcnnamespace.go AddNamespaceEndpoint); with held
   * handles, the namespace's handle is kept until its endpoints are detached.
   */
  async attachNamespace(endpointId: string, namespaceId: string): Promise<void> {
    if (this.held) await this.held.attach(this.hcn, namespaceId, endpointId);
    else await this.hcn.addNamespaceEndpoint(namespaceId, endpointId);
  }
  /**
   * HcnOpenNamespace + HcnModifyNamespace (microsoft/hcsshim hcn/hcnnamespace.go RemoveNamespaceEndpoint); with held
   * handles, one HcnModifyNamespace on the handle kept since the attach.
   */
  detachNamespace(endpointId: string, namespaceId: string): Promise<DeleteOutcome> {
    if (this.held) return detachOutcome(this.held.detach(this.hcn, namespaceId, endpointId));
    return detachOutcome(this.hcn.removeNamespaceEndpoint(namespaceId, endpointId));
  }
  async namespaceExists(namespaceId: string): Promise<boolean> {
    return (await orUndefined(this.hcn.getNamespace(namespaceId))) !== undefined;
  }
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

/**
 * managementIpOf: the network's ManagementIP. win-overlay reads it from the v1 network (hcsshim GetHNSNetworkByName)
 * even on its HCN path (containernetworking/plugins plugins/main/windows/win-overlay); so do we, when HNSCall exists.
 */
export async function managementIpOf(api: HnsApi, network: NetworkInfo): Promise<string | undefined> {
  if (network.managementIp !== undefined) return network.managementIp;
  if (!api.hcn.capabilities.v1Supported) return undefined;
  const n = await api.hcn.hnsCall<HnsV1Network>('GET', `/networks/${network.id}`);
  return typeof n?.ManagementIP === 'string' && n.ManagementIP !== '' ? n.ManagementIP : undefined;
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

export class V1Api extends HostOpsBase implements HnsApi {
  readonly version = 1 as const;

  async endpointIds(): Promise<string[]> {
    return (await this.listEndpoints()).map((e) => e.id);
  }

  async listNetworks(): Promise<NetworkInfo[]> {
    return ((await this.hcn.hnsCall<HnsV1Network[]>('GET', '/networks/')) ?? []).map(networkFromV1);
  }
  async findNetworkByName(name: string): Promise<NetworkInfo | undefined> {
    return (await this.listNetworks()).find((n) => n.name === name);
  }
  async getNetwork(id: string): Promise<NetworkInfo | undefined> {
    const n = await orUndefined(this.hcn.hnsCall<HnsV1Network>('GET', `/networks/${id}`));
    return n ? networkFromV1(n) : undefined;
  }
  async createNetwork(spec: NetworkSpec, id?: string): Promise<NetworkInfo> {
    // No Flags: HNS v1's network has none (microsoft/hcsshim internal/hns/hnsnetwork.go HNSNetwork).
    const body: HnsV1Network = {
      Name: spec.name,
      // Docker and hcsshim send the v1 type in lower case.
      Type: spec.type.toLowerCase(),
      Policies: render(spec.policies, 1) as HnsV1Network['Policies'],
      Subnets: spec.subnets.map((s) =>
        s.gateway ? { AddressPrefix: s.prefix, GatewayAddress: s.gateway } : { AddressPrefix: s.prefix },
      ),
    };
    if (id) body.ID = id;
    if (spec.adapterName) body.NetworkAdapterName = spec.adapterName;
    return networkFromV1(await this.hcn.hnsCall<HnsV1Network>('POST', '/networks/', body));
  }
  deleteNetwork(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.hnsCall('DELETE', `/networks/${id}`));
  }
  async listEndpoints(): Promise<EndpointInfo[]> {
    return ((await this.hcn.hnsCall<HnsV1Endpoint[]>('GET', '/endpoints/')) ?? []).map(endpointFromV1);
  }
  async findEndpoints(filter: { name: string } | { networkId: string }): Promise<EndpointInfo[]> {
    // HNSCall has no query: hcsshim internal/hns GetHNSEndpointByName lists them all too.
    const all = await this.listEndpoints();
    return 'name' in filter
      ? all.filter((e) => e.name === filter.name)
      : all.filter((e) => sameId(e.networkId, filter.networkId));
  }
  async getEndpoint(id: string): Promise<EndpointInfo | undefined> {
    const e = await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${id}`));
    return e ? endpointFromV1(e) : undefined;
  }
  async createEndpoint(network: NetworkInfo, spec: EndpointSpec, id?: string): Promise<EndpointInfo> {
    return endpointFromV1(
      await this.hcn.hnsCall<HnsV1Endpoint>('POST', '/endpoints/', v1EndpointSpec(network, spec, id)),
    );
  }
  deleteEndpoint(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.hnsCall('DELETE', `/endpoints/${id}`));
  }
  addEndpointPolicies(): Promise<void> {
    return Promise.reject(
      new PolicyError('adding policies to an existing endpoint needs the HCN (v2) API; this host uses HNS v1'),
    );
  }
  async attachNamespace(endpointId: string, namespaceId: string): Promise<void> {
    await addToNamespaceV1(this.hcn, namespaceId, endpointId);
  }
  detachNamespace(endpointId: string, namespaceId: string): Promise<DeleteOutcome> {
    return detachOutcome(removeFromNamespaceV1(this.hcn, namespaceId, endpointId));
  }
  async namespaceExists(namespaceId: string): Promise<boolean> {
    return (await orUndefined(this.hcn.hnsCall('GET', `/namespaces/${namespaceId}`))) !== undefined;
  }
}

/** The v1 body of an endpoint (HNS v1's fields: microsoft/hcsshim internal/hns/hnsendpoint.go HNSEndpoint). */
function v1EndpointSpec(network: NetworkInfo, spec: EndpointSpec, id?: string): HnsV1Endpoint {
  const body: HnsV1Endpoint = {
    Name: spec.name,
    VirtualNetwork: network.id,
    VirtualNetworkName: network.name,
    Policies: render(spec.policies, 1) as HnsV1Endpoint['Policies'],
  };
  if (id) body.ID = id;
  const ip = spec.ips[0];
  if (ip) {
    body.IPAddress = ip.address;
    if (ip.prefixLength !== undefined) body.PrefixLength = ip.prefixLength;
  }
  if (spec.mac) body.MacAddress = spec.mac;
  // The plugin refuses IPv6 on v1 before it gets here (dual-stack is an HCN feature); only IPv4 goes to v1.
  const gw4 = spec.gateways?.find((g) => familyOf(g) === 4);
  if (gw4) body.GatewayAddress = gw4;
  if (spec.dns.servers.length) body.DNSServerList = spec.dns.servers.join(',');
  // The domain has a field of its own (DNSDomain), as HCN's Dns.Domain: it is not one more search suffix.
  if (spec.dns.search.length) body.DNSSuffix = spec.dns.search.join(',');
  if (spec.dns.domain) body.DNSDomain = spec.dns.domain;
  return body;
}
