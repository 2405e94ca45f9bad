/**
 * HCN JSON schemas as HNS speaks them (PascalCase keys, string enums on output, numeric flags). Only the fields
 * this project reads or writes are typed; HNS sends more, and unknown keys are kept.
 * Sources: microsoft/hcsshim hcn/hcnnetwork.go, hcn/hcnendpoint.go, hcn/hcnnamespace.go (v2) and internal/hns/*.go
 * (v1); MicrosoftDocs/Virtualization-Documentation virtualization/api/hcn/HNS_Schema.md.
 */

export interface SchemaVersion {
  Major: number;
  Minor: number;
}

export const SCHEMA_V2: SchemaVersion = { Major: 2, Minor: 0 };

/** HostComputeQuery. Filter is a JSON object serialised as a string, matched on v1 field names by equality. */
export interface HostComputeQuery {
  SchemaVersion: SchemaVersion;
  Flags?: number;
  Filter?: string;
}

export interface TypedPolicy {
  Type: string;
  Settings?: Record<string, unknown>;
}

export interface Route {
  NextHop?: string;
  DestinationPrefix: string;
  Metric?: number;
}

export interface Subnet {
  IpAddressPrefix: string;
  Policies?: TypedPolicy[];
  Routes?: Route[];
}

export interface Ipam {
  Type?: 'Static' | 'Dhcp';
  Subnets: Subnet[];
}

export interface Dns {
  Domain?: string;
  Search?: string[];
  ServerList?: string[];
  Options?: string[];
}

export interface MacRange {
  StartMacAddress: string;
  EndMacAddress: string;
}

/** NetworkFlags bit values (WSL hns_schema.h; agrees with hcsshim). */
export const NetworkFlags = {
  None: 0,
  EnableDns: 1,
  EnableDhcp: 2,
  EnableMirroring: 4,
  EnableNonPersistent: 8,
  EnablePersistent: 16,
  IsolateVSwitch: 32,
  DisableHostPort: 1024,
  EnableIov: 8192,
} as const;

export type NetworkMode = 'NAT' | 'ICS' | 'Transparent' | 'L2Bridge' | 'L2Tunnel' | 'Overlay' | 'Private' | 'Internal';

export interface HostComputeNetwork {
  ID?: string;
  Name?: string;
  /** Omitted by HNS for NAT: a zero-valued enum is left out of the output (hcsshim presets NAT for that reason). */
  Type?: NetworkMode | string;
  Policies?: TypedPolicy[];
  MacPool?: { Ranges: MacRange[] };
  Dns?: Dns;
  Ipams?: Ipam[];
  Flags?: number;
  SchemaVersion?: SchemaVersion;
  [extra: string]: unknown;
}

export interface IpConfiguration {
  IpAddress: string;
  PrefixLength?: number;
}

export interface HostComputeEndpoint {
  ID?: string;
  Name?: string;
  HostComputeNetwork?: string;
  /** Read-only: set by HNS once the endpoint is in a namespace. */
  HostComputeNamespace?: string;
  Policies?: TypedPolicy[];
  IpConfigurations?: IpConfiguration[];
  Dns?: Dns;
  Routes?: Route[];
  MacAddress?: string;
  Flags?: number;
  SchemaVersion?: SchemaVersion;
  [extra: string]: unknown;
}

export interface NamespaceResource {
  Type: 'Container' | 'Endpoint';
  Data: { Id: string };
}

export interface HostComputeNamespace {
  ID?: string;
  NamespaceId?: number;
  Type?: 'Host' | 'HostDefault' | 'Guest' | 'GuestDefault';
  Resources?: NamespaceResource[];
  SchemaVersion?: SchemaVersion;
  [extra: string]: unknown;
}

export interface ModifyRequest {
  ResourceType: string;
  RequestType: 'Add' | 'Remove' | 'Update' | 'Refresh' | 'Reset';
  Settings: unknown;
}

/**
 * HCS modify request for hot attach: microsoft/hcsshim internal/hcs/schema1/schema1.go
 * ResourceModificationRequestResponse {Resource `json:"ResourceType"`, Data `json:"Settings"`, Request
 * `json:"RequestType,omitempty"`}; hnsendpoint.go sends ResourceType "Network" with the endpoint id as Settings.
 */
export interface ResourceModificationRequestResponse {
  ResourceType: 'Network';
  Settings: string;
  RequestType: 'Add' | 'Remove';
}

// ---- HNS v1 (HNSCall) ----

export interface V1Envelope<T = unknown> {
  Success: boolean;
  Error?: string;
  ErrorCode?: number;
  Output?: T;
}

export type FlatPolicy = { Type: string } & Record<string, unknown>;

export interface HnsV1Network {
  ID?: string;
  Name?: string;
  /** Lower-case on output ("l2bridge", "nat"). */
  Type?: string;
  NetworkAdapterName?: string;
  /** The bound NIC's MAC (hcsshim internal/hns/hnsnetwork.go HNSNetwork.SourceMac). */
  SourceMac?: string;
  Policies?: FlatPolicy[];
  MacPools?: MacRange[];
  Subnets?: Array<{ AddressPrefix: string; GatewayAddress?: string; Policies?: FlatPolicy[] }>;
  DNSSuffix?: string;
  DNSServerList?: string;
  Flags?: number;
  [extra: string]: unknown;
}

export interface HnsV1Endpoint {
  ID?: string;
  Name?: string;
  VirtualNetwork?: string;
  VirtualNetworkName?: string;
  Policies?: FlatPolicy[];
  MacAddress?: string;
  IPAddress?: string;
  PrefixLength?: number;
  GatewayAddress?: string;
  /** v1's IPv6 fields (microsoft/hcsshim internal/hns/hnsendpoint.go): read, never written by the plugin. */
  IPv6Address?: string;
  IPv6PrefixLength?: number;
  GatewayAddressV6?: string;
  DNSSuffix?: string;
  DNSServerList?: string;
  /** The DNS domain, apart from the search list (microsoft/hcsshim internal/hns/hnsendpoint.go HNSEndpoint). */
  DNSDomain?: string;
  SharedContainers?: string[];
  /** 1 Created, 2 Attached, 3 AttachedSharing, 4 Detached, 5 Degraded, 6 Destroyed. */
  State?: number;
  Namespace?: { ID: string };
  [extra: string]: unknown;
}

export interface HnsV1Namespace {
  ID?: string;
  ResourceList?: unknown[];
  [extra: string]: unknown;
}
