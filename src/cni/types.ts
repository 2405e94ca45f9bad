/**
 * The CNI vocabulary: versions, the parsed configuration, results and the handler interface through which the
 * protocol layer (src/cni) calls the plugin (src/plugin). This file and cni-error.ts import nothing of the project,
 * so the plugin may use them without reaching up into the dispatcher.
 */

/**
 * 0.1.0 and 0.2.0 are spoken because the peers' samples are written for them (win-bridge, win-overlay and every
 * microsoft/windows-container-networking example are 0.2.0 or unversioned) and the peers accept every version; their
 * results take the legacy ip4/ip6 shape (src/cni/result.ts).
 */
export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];

export type Verb = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';

/** What the runtime says about one attachment (from the CNI_* environment). */
export interface AttachmentArgs {
  containerId: string;
  ifname: string;
  /** CNI_NETNS verbatim ('' when unset, which DEL allows). */
  netns: string;
  /** CNI_ARGS parsed: `K1=V1;K2=V2`. */
  args: Readonly<Record<string, string>>;
  /** CNI_PATH split on the platform's list separator (';' on Windows, ':' elsewhere). */
  path: readonly string[];
}

export interface Dns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

export interface Interface {
  name: string;
  /** Colon-separated lowercase, as CNI results carry MACs. */
  mac?: string;
  sandbox?: string;
  /** 1.1.0 only. */
  mtu?: number;
  socketPath?: string;
  pciID?: string;
}

export interface IpConfig {
  /** CIDR: "10.0.0.5/24". */
  address: string;
  gateway?: string;
  /** Index into interfaces. */
  interface?: number;
}

export interface Route {
  dst: string;
  gw?: string;
  /** 1.1.0 only. */
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}

/** A result in version-neutral form; src/cni/result.ts shapes it for the requested cniVersion. */
export interface CniResult {
  interfaces: Interface[];
  ips: IpConfig[];
  routes: Route[];
  dns: Dns;
}

export interface SubnetConf {
  family: 4 | 6;
  prefix?: string;
  gateway?: string;
}

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol: 'tcp' | 'udp' | 'sctp';
  hostIP?: string;
}

export interface RuntimeDns {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

/**
 * An HNS policy exactly as the configuration gave it (an object), from `AdditionalArgs` [{Name, Value}] (Azure
 * CNI, sdnbridge) or `policies` [{name, value}] (win-bridge). The plugin translates it between the v1 flat and the
 * v2 typed forms (src/hns/policies.ts); the protocol layer only checks that it is an object with a string Type.
 */
export interface RawPolicy {
  /** Where it came from, for error messages: `AdditionalArgs[2].Value`. */
  source: string;
  value: Record<string, unknown>;
}

export type Mode = 'bridge' | 'delegatedNic';
export type ApiVersionSetting = 'auto' | 1 | 2;
export type BridgeNetworkType = 'L2Bridge' | 'Overlay' | 'NAT' | 'L2Tunnel';
/** Incumbent plugins whose ambiguous HNS names DEL, GC and the audit may act on (opt-in: NetConf adopt). */
export type AdoptPeer = 'azure';
export type { LogLevel } from '../log/logger';
import type { LogLevel, Logger } from '../log/logger';

export interface Attachment {
  containerId: string;
  ifname: string;
}

/**
 * The plugin's configuration after parsing and validation (src/cni/config.ts parseNetConf). Keys in the input match
 * case-insensitively; every optional setting here has its documented default applied already.
 */
export interface NetConf {
  cniVersion: CniVersion;
  /** The network configuration name (CNI `name`). */
  name: string;
  /** CNI `type` (normally "hcn-cni"). */
  type: string;
  mode: Mode;
  apiVersion: ApiVersionSetting;

  /** HNS network to attach to in bridge mode. Default: `name`. */
  networkName: string;
  /** Its type when it is created, and the type an existing one must have. Default L2Bridge. */
  networkType: BridgeNetworkType;
  /** Whether networkType was configured (else an existing network of any bridge-mode type is used with its own type). */
  networkTypeSet: boolean;
  /** Create the bridge-mode network when it does not exist (needs `subnet`). Default false; true with sdnbridge's `master`. */
  createNetwork: boolean;
  /** createNetwork was not given and sdnbridge's `master` + subnet turned it on. */
  createNetworkFromMaster: boolean;
  /** win-overlay's ipMasq: the network's subnet becomes an OutBoundNAT exception. Default false. */
  ipMasq: boolean;
  /** win-overlay's endpointMacPrefix ("0E-2A"): on Overlay networks with IPAM the MAC is prefix + the IPv4's bytes. */
  endpointMacPrefix: string;
  /**
   * `subnet` / `gateway`: at most one per address family, IPv4 first (bridge-mode creation; delegated-NIC networks
   * without IPAM). A gateway defaults to its subnet's first address where the plugin creates the network. An entry may
   * have only a gateway (no subnet given: the gateway for an existing network's family).
   */
  subnets?: SubnetConf[];
  /** Host adapter the bridge-mode network binds when created (NetAdapterName policy). */
  adapterName?: string;
  /** Interface MTU (v2: InterfaceParameters policy); reported in 1.1.0 results. */
  mtu?: number;

  /** Delegated IPAM: `ipam.type` is an executable name looked up on CNI_PATH only. Absent: HNS assigns. */
  ipam?: { type: string } & Record<string, unknown>;
  /** Static DNS from `dns` (Nameservers/Search/Domain/Options in any case). */
  dns: Dns;
  endpointPolicies: RawPolicy[];
  networkPolicies: RawPolicy[];
  /** Adds an OutBoundNAT policy whose destination is the pod's own IP (hairpin through a service VIP). */
  loopbackDSR: boolean;
  /** delegatedNic: SR-IOV (EnableIov network flag + Iov endpoint policy). */
  iov: boolean;
  /** delegatedNic: DisableHostPort network flag; undefined: set where HNS supports it. */
  disableHostPort?: boolean;
  /** CIDRs excluded from outbound NAT (`outboundNatExceptions`, or win-bridge's `ipMasqNetwork`). */
  outboundNatExceptions: string[];

  /** runtimeConfig.portMappings (capability portMappings). */
  portMappings: PortMapping[];
  /** runtimeConfig.dns (capability dns); overrides the static servers/search when present. */
  runtimeDns?: RuntimeDns;
  /** runtimeConfig.mac (capability mac), normalised to "AA-BB-CC-DD-EE-FF". */
  runtimeMac?: string;

  /** Per HNS call; on expiry the verb fails with code 11. Default 30. */
  hnsTimeoutSeconds: number;
  /** Per delegated-IPAM exec. Default 30. */
  ipamTimeoutSeconds: number;
  /** Default: C:\ProgramData\hcn-cni\state on Windows, /var/lib/hcn-cni on Linux. */
  stateDir: string;
  /** JSON-lines log file in addition to stderr. Default: none. */
  logFile?: string;
  logLevel: LogLevel;
  /** Run the leak audit (the whole node's when due, and every ADD's of its own objects). Default true; false brings seed 000 back. */
  audit: boolean;
  /** How often the whole node is audited (service timer, or the standalone ADD that finds it due); 0: every ADD. Default 60. */
  auditIntervalSeconds: number;
  /** The service repairs pods after an HNS restart (src/plugin/verbs/repair.ts). Default false. */
  repair: boolean;
  /**
   * Peers whose names do not identify a pod unambiguously, and whose objects may still be removed (opt-in): "azure"
   * (endpoints <first 8 of the container id>-<ifname>, delegated-NIC networks azure-<mac>). Default none.
   */
  adopt: readonly AdoptPeer[];

  /** Parsed `prevResult` (DEL, CHECK). */
  prevResult?: CniResult;
  /** GC: `cni.dev/valid-attachments`, or the older `cni.dev/attachments`. */
  validAttachments?: Attachment[];

  /**
   * Keys that were accepted but not acted on (unknown keys, which the spec says pass through; AdditionalArgs entries
   * that are not policies; capabilities we do not implement). The dispatcher logs them with the verb's line.
   */
  warnings: string[];

  /** The configuration object exactly as it arrived on stdin. */
  raw: Readonly<Record<string, unknown>>;
  /** A flannel-style wrapper's settings lifted to the top level: what delegated IPAM is given instead of stdin. */
  effective?: Readonly<Record<string, unknown>>;
}

/** What delegated IPAM returns (the abbreviated result: no interfaces normally). */
export interface IpamResult {
  ips: IpConfig[];
  routes: Route[];
  dns: Dns;
  /** Some IPAMs report the interface (and its MAC) they allocated for. */
  interfaces: Interface[];
}

/** Delegated IPAM, bound to the current invocation's environment and stdin. */
export interface IpamClient {
  /** False when the configuration has no `ipam.type`; every call then throws. */
  readonly configured: boolean;
  readonly type: string | undefined;
  add(): Promise<IpamResult>;
  del(): Promise<void>;
  check(): Promise<void>;
  /** Whether ipam.type is found on CNI_PATH (false when none is configured). */
  installed(): Promise<boolean>;
  /** DEL on behalf of another attachment (GC). */
  delFor(attachment: Attachment): Promise<void>;
  /** Forwards GC (only when the IPAM supports 1.1.0; reports false when it does not). */
  gc(): Promise<boolean>;
  /** Forwards STATUS (only when the IPAM supports 1.1.0; reports false when it does not). */
  status(): Promise<boolean>;
}

/** The logger handed to the plugin (pino's interface, reduced to what is used): src/log/logger.ts. */
export type { Logger } from '../log/logger';

export interface VerbContext {
  verb: 'ADD' | 'DEL' | 'CHECK';
  conf: NetConf;
  attachment: AttachmentArgs;
  ipam: IpamClient;
  log: Logger;
}

export interface ConfContext {
  verb: 'GC' | 'STATUS';
  conf: NetConf;
  /** CNI_PATH (GC requires it; STATUS may have it empty). */
  path: readonly string[];
  ipam: IpamClient;
  log: Logger;
}

/** The plugin, as the dispatcher sees it. Throw CniError for a failure with a CNI code. */
export interface CniHandlers {
  add(ctx: VerbContext): Promise<CniResult>;
  del(ctx: VerbContext): Promise<void>;
  check(ctx: VerbContext): Promise<void>;
  gc(ctx: ConfContext): Promise<void>;
  status(ctx: ConfContext): Promise<void>;
}
