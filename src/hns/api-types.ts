/**
 * What the plugin sees of HNS, whichever API the host offers: the views (NetworkInfo, EndpointInfo), the specs it
 * creates objects from, and HnsApi, the interface V2Api (v2/api.ts) and V1Api (v1/api.ts) implement. Types only: the
 * two implementations and the front (api.ts) import them from here, so no file imports the front back.
 */
import type { HnsVersion } from './features';
import type { Hcn, HostAdapter } from './hcn';
import type { HnsV1Endpoint, HostComputeEndpoint, NetworkMode, TypedPolicy } from './schema';

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

/** Every endpoint's document, in the view it was listed through. */
export type EndpointListing = { view: 1; docs: HnsV1Endpoint[] } | { view: 2; docs: HostComputeEndpoint[] };

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
   * Every endpoint as the listing listEndpoints makes reads it — HNSCall GET /endpoints/ (v1) or HCN's documents —
   * whole: for readers that need more of each endpoint than EndpointInfo holds (its DNS, its policies), from the same
   * one listing (converters.ts endpointsOfListing gives the views).
   */
  listEndpointDocuments(): Promise<EndpointListing>;
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
  /**
   * Whether HCS has the compute system (a container a pod was hot-attached to): HcsOpenComputeSystem, then close;
   * undefined where the host has no HCS functions.
   */
  computeSystemExists(containerId: string): Promise<boolean | undefined>;
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

/**
 * How V2Api lists everything (the audit's hot path). HCN has no bulk query: listNetworksDetailed enumerates, then
 * opens and queries each object — 2N+1 calls into HNS. HNS v1 answers GET /networks/ and GET /endpoints/ with every
 * object in one call, and it is the same object store, so when HNSCall is there it is the faster listing (bench/
 * audit.bench.js measures both). 'hcn' forces the HCN listing.
 */
export type Listing = 'auto' | 'hcn' | 'v1';
