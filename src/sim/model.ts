/**
 * The simulator's canonical object model. HNS keeps one object store and renders it through two schemas (v1 HNSCall,
 * v2 HCN); so does the simulator: these plain records are what it stores (and persists), and views.ts renders them.
 * Policies are kept in their v2 typed form ({type, settings}); policies.ts translates the v1 flat form in and out.
 */
import type { ApiFlavour } from './guid';
import type { MacRange } from './mac';

/** NetworkMode, in the v2 spelling. NAT is the zero value (omitted from v2 output). */
export const NETWORK_TYPES = [
  'NAT',
  'ICS',
  'Transparent',
  'L2Bridge',
  'L2Tunnel',
  'Overlay',
  'Private',
  'Internal',
  'Mirrored',
  'Infiniband',
  'ConstrainedICS',
] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

/** Network types whose creation binds a physical adapter to an external vSwitch. */
export const ADAPTER_BOUND_TYPES: ReadonlySet<NetworkType> = new Set([
  'Transparent',
  'L2Bridge',
  'L2Tunnel',
  'Overlay',
]);
/** Network types that HNS refuses without at least one subnet (HCN_E_INVALID_NETWORK). */
export const SUBNET_REQUIRED_TYPES: ReadonlySet<NetworkType> = new Set(['L2Bridge', 'L2Tunnel', 'Overlay']);
/** Network types that get a default 172.x.y.0/20 subnet when none is configured, as HNS's "nat" network does. */
export const DEFAULT_SUBNET_TYPES: ReadonlySet<NetworkType> = new Set(['NAT', 'ICS']);

export const NetworkFlags = {
  EnableDns: 1,
  EnableDhcp: 2,
  EnableMirroring: 4,
  /** Gone after an HNS restart or reboot (docker/for-win#12425). */
  EnableNonPersistent: 8,
  IsolateVSwitch: 32,
} as const;

export const EndpointFlags = { RemoteEndpoint: 1, DisableICC: 2, EnableLowInterfaceMetric: 8 } as const;

export const EndpointState = { Created: 1, Attached: 2, AttachedSharing: 3, Detached: 4 } as const;

export interface Policy {
  /** v2 policy type name, e.g. "OutBoundNAT", "PortMapping", "SDNRoute". */
  type: string;
  /** v2 Settings object. */
  settings: Record<string, unknown>;
}

export interface Route {
  nextHop?: string;
  destinationPrefix?: string;
  metric?: number;
}

export interface Dns {
  domain?: string;
  search: string[];
  serverList: string[];
  options: string[];
}

export interface Subnet {
  /** Uppercase GUID, as v1 output shows subnet ids. */
  id: string;
  prefix: string;
  /** The default route's next hop is the subnet's gateway (v1 GatewayAddress). */
  routes: Route[];
  /** VLAN / VSID isolation policies. */
  policies: Policy[];
}

interface Base {
  /** As stored: lowercase when created through v2, uppercase through v1. */
  id: string;
  createdBy: ApiFlavour;
  /** Schema version of the create request (v2 creates), shown back in v2 views. */
  schemaVersion: { major: number; minor: number };
  /** Bumped on every change, as HNS's Version field is. */
  version: number;
}

export interface NetworkObj extends Base {
  name: string;
  type: NetworkType;
  flags: number;
  policies: Policy[];
  ipamType: 'Static' | 'Dhcp';
  subnets: Subnet[];
  macPools: MacRange[];
  dns: Dns;
  /** Adapter bound by this network (adapter-bound types only). */
  adapter?: string;
  /**
   * That adapter's MAC when the network bound it (v1 SourceMac, microsoft/hcsshim internal/hns/hnsnetwork.go): kept
   * when the NIC is replaced by one of the same name, as HNS networks stay bound to the adapter they were created on
   * when its id changes (projectcalico/calico issue 11840: "existing HNS networks and endpoints remain bound to the
   * old adapter ID"). That an HNS view then shows the old MAC is our reading, not a documented behaviour.
   */
  adapterMac?: string;
  managementIp?: string;
  /** Stable per-network ids shown in Health.Extra / v1 output (SwitchGuid is derived: src/sim/views.ts switchGuid). */
  layeredOn: string;
  activityId: string;
}

export interface EndpointObj extends Base {
  name: string;
  /** Id of the network, as the network stores it. */
  networkId: string;
  /** The IPv4 address (v2 IpConfigurations, v1 IPAddress). */
  ipAddress?: string;
  prefixLength?: number;
  /** The IPv6 address: an endpoint has at most one per family (v2 IpConfigurations, v1 IPv6Address). */
  ip6Address?: string;
  ip6PrefixLength?: number;
  macAddress: string;
  policies: Policy[];
  dns: Dns;
  routes: Route[];
  flags: number;
  /** Namespace the endpoint was added to (v2 modify / v1 addresource). */
  namespaceId?: string;
  /** v1 attach: container ids (or "Host"/"VirtualMachine" for attaches without one). */
  sharedContainers: string[];
  state: number;
}

export interface NamespaceResource {
  type: 'Endpoint' | 'Container';
  id: string;
}

export type NamespaceType = 'Host' | 'HostDefault' | 'Guest' | 'GuestDefault';

export interface NamespaceObj extends Base {
  type: NamespaceType;
  /** Compartment id. */
  namespaceId: number;
  resources: NamespaceResource[];
}

export type ObjectKind = 'network' | 'endpoint' | 'namespace';

export function emptyDns(): Dns {
  return { search: [], serverList: [], options: [] };
}

/**
 * The subnet's gateway: the next hop of its default route of the subnet's family (0.0.0.0/0 or ::/0, as
 * Azure/azure-container-networking network/network_windows.go writes a subnet's route per family).
 */
export function subnetGateway(s: Subnet): string | undefined {
  const dst = s.prefix.includes(':') ? '::/0' : '0.0.0.0/0';
  return s.routes.find((r) => r.destinationPrefix === dst && r.nextHop)?.nextHop;
}

export function isPersistent(n: NetworkObj): boolean {
  return (n.flags & NetworkFlags.EnableNonPersistent) === 0;
}
