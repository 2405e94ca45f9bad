/**
 * What the steps of an ADD pass each other (add.ts, add-plan.ts): the plan (plain data, made once by `prepare`), the
 * run it is carried out with (the dependencies and capabilities), the mode as an object, and what each step returns.
 * Types only: every step's module imports them from here, so none of them imports another step's module for a type.
 */
import type { AttachmentArgs, Dns, IpConfig, IpamClient, NetConf, Route } from '../cni/types';
import type { EndpointInfo, EndpointSpec, HnsApi, NetworkInfo, NetworkSpec, SubnetInfo } from '../hns/api';
import type { TypedPolicy } from '../hns/schema';
import type { Logger } from '../log/logger';
import type { AttachmentRecord, IntentRecord, Owner, PlannedObject, RecordedAdapter } from '../state/records';
import type { StateStore } from '../state/store';
import type { ApiChoice } from './api-version';
import type { RecordedAttach } from './attach';
import type { AddressBook } from './address-book';
import type { Auditor } from './auditor';
import type { HostHns } from './host-hns';
import type { KnownNetworks } from './modes/known-networks';
import type { StateStores } from './state-stores';
import type { podDns } from './endpoint-config';
import type { Undo } from './undo';

/** The host's answer to "which API, and which HNS": the API chosen and why, and the HNS version asked once. */
export type HostApi = Readonly<Omit<ApiChoice, 'api'>>;

export interface AddPlan {
  readonly conf: NetConf;
  readonly attachment: Readonly<AttachmentArgs>;
  readonly owner: Owner;
  /** The API chosen for the host, with the HNS version asked once (undefined only where HNS has no HNSCall). */
  readonly choice: HostApi;
  /** Bridge or delegated NIC, chosen once: what differs between them is its methods (modes/mode.ts). */
  readonly mode: AddMode;
  readonly attach: RecordedAttach;
  /** Endpoint policies, already validated for the API in use (without the pod-IP dependent ones). */
  readonly policies: readonly TypedPolicy[];
  /** Network policies (AdditionalArgs NetworkPolicy), for networks this ADD creates. */
  readonly networkPolicies: readonly TypedPolicy[];
  /** Flags of the network this mode creates (delegated NIC: nicNetworkFlags), decided before anything is created. */
  readonly nicFlags?: number;
}

/** What an ADD uses of the plugin's dependencies (made once per process: deps.ts): every part. */
export interface AddDeps {
  /** The host's HNS: the addon, the API choice, the OS helpers, kept HCN handles (host-hns.ts). */
  readonly hns: HostHns;
  readonly stores: StateStores;
  readonly auditor: Auditor;
  /** Shared (bridge) networks found by name (modes/known-networks.ts). */
  readonly networks: KnownNetworks;
  /** Who holds which address, as this process knows it (the resident service only; address-book.ts). */
  readonly addressBook: AddressBook | undefined;
  readonly now: () => number;
  /** This process, as intents record it. */
  readonly pid: number;
  /**
   * The whole node's audit runs in the background (the resident service's node agent): ADD never runs it when due,
   * only its own safety work (own-objects.ts).
   */
  readonly backgroundAudit: boolean;
}

/** What the ADD's steps run with: the plan, and the capabilities it is carried out through. */
export interface AddRun {
  readonly plan: AddPlan;
  readonly deps: AddDeps;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly ipam: IpamClient;
  readonly log: Logger;
  /** What this ADD created so far, undone if it fails. */
  readonly undo: Undo;
}

/**
 * What the two modes do differently, chosen once (modes/choose.ts): bridge mode (modes/bridge.ts) places every pod's
 * endpoint in one shared network; delegated-NIC mode (modes/delegated-nic.ts) creates a network of the pod's own on
 * its NIC, then the endpoint in it. Everything else an ADD does is the same for both.
 */
export interface AddMode {
  readonly name: NetConf['mode'];
  /** Settings only this mode accepts, refused in the other before anything is asked of HNS. */
  check(conf: NetConf): void;
  /** Flags of the network this mode creates for a pod (undefined: it creates none). */
  networkFlags(conf: NetConf, host: HostApi): number | undefined;
  /**
   * Why this mode has no network its pods share (the service's network at start, the self-test's network): undefined
   * when it has one, the configuration's.
   */
  readonly noSharedNetwork: string | undefined;
  /** The network this attachment names for itself (its own leftovers are looked up by it: own-objects.ts). */
  ownNetworkName(owner: Owner): string | undefined;
  /** What the intent plans before anything is allocated, and the MAC known by then. */
  claimPlan(a: AddRun, existing: AttachmentRecord | undefined): { planned: PlannedObject[]; mac?: string };
  /** The place step: the network supplied, and the endpoint the intent planned created in it (endpoint.ts). */
  place(a: AddRun, got: Claimed): Promise<Placed>;
}

/** What the steps before `place` decided: the intent, the addresses, the record being re-created, the audit's listing. */
export interface Claimed {
  readonly intent: IntentRecord;
  readonly addr: Addressing;
  readonly existing: AttachmentRecord | undefined;
  readonly listed: readonly NetworkInfo[] | undefined;
}

/** Where the pod's addresses come from: delegated IPAM (this invocation), an existing record, or HNS. */
export interface Addressing {
  readonly ips: IpConfig[];
  readonly routes: Route[];
  readonly dns: Dns | undefined;
  /** IPAM holds an allocation for this attachment (made now, or by the ADD that made the record). */
  readonly ipamAllocated: boolean;
  /** MAC the IPAM result reported for the interface, if any. */
  readonly ipamMac: string | undefined;
  /** The addresses were chosen before the endpoint (IPAM, a record, a chained prevResult), not by HNS. */
  readonly fromIpam?: boolean;
}

/** Where the mode puts the endpoint: the network it found or created, and what that network gives the endpoint. */
export interface EndpointPlacement {
  readonly network: NetworkInfo;
  /** Whether the network is this attachment's own (delegated NIC) or shared (bridge). */
  readonly networkOwned: boolean;
  readonly mode: 'bridge' | 'delegatedNic';
  /** The subnets (at most one per family, IPv4 first) addresses come from when HNS assigns them (no IPAM). */
  readonly subnets: SubnetInfo[];
  /** Default gateways, at most one per family. */
  readonly gateways: string[];
  /** A fixed MAC (delegated NIC); else HNS picks one from its pool. */
  readonly mac?: string;
  /** The spec the attachment's own network was created with (delegated NIC): recorded for repair. */
  readonly networkSpec?: NetworkSpec;
  /** The host adapter that network binds, as the ADD found it (delegated NIC): recorded for the doctor. */
  readonly adapter?: RecordedAdapter;
  /** The endpoint policies in this network: the plan's, plus what the network adds (bridge.ts: Overlay, ipMasq). */
  readonly policies: readonly TypedPolicy[];
}

/** The endpoint the intent planned, as HNS is asked to create it. */
export interface PlannedEndpoint {
  readonly name: string;
  readonly id: string | undefined;
  readonly spec: EndpointSpec;
  readonly families: ReadonlySet<4 | 6>;
  /** The IPv4 address chosen before the create (IPAM or a record); undefined when HNS assigns it. */
  readonly ipv4: string | undefined;
  readonly dns: ReturnType<typeof podDns>;
}

/** What the place step decided: where, the endpoint as planned and as HNS created it, and the claim naming it. */
export interface Placed {
  readonly where: EndpointPlacement;
  readonly endpoint: PlannedEndpoint;
  readonly ep: EndpointInfo;
  /** The intent, following the ids HNS really gave. */
  readonly intent: IntentRecord;
}
