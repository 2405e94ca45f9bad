/**
 * What the doctor judges: everything read once, as plain data (gather.ts reads it; the checks only look at it). A
 * part that could not be read is absent, with the reason beside it, so the checks of the other parts still run.
 */
import type { EndpointInfo, NetworkInfo } from '../hns/api';
import type { HostAdapter } from '../hns/hcn';
import type { TypedPolicy } from '../hns/schema';
import type { AdaptersSeen } from '../state/adapters-seen';
import type { NotedChore } from '../state/housekeeping';
import type { Liveness } from '../state/liveness';
import type { StateSnapshot } from '../state/store';

/** An endpoint's DNS and policies as HNS shows them (the v2 document; v1 shows DNS only, as one suffix list). */
export interface EndpointDoc {
  dns: { servers: string[]; search?: string[]; domain?: string };
  /** The policies HNS shows, in the typed (v2) form. */
  policies?: TypedPolicy[];
  /**
   * 1: read from v1's flat form, which holds only what v1 can say of a policy (a setting of HCN's alone is not there;
   * check-drift.ts compares what the record gave as v1 would show it).
   */
  policiesView?: 1;
  /** v2 Flags; v1's IsRemoteEndpoint as its flag (1). */
  flags?: number;
}

export interface HnsView {
  /** The API the reads went through. */
  apiVersion: 1 | 2;
  networks: NetworkInfo[];
  endpoints: EndpointInfo[];
  /** By endpoint id, lower case. */
  endpointDocs: Record<string, EndpointDoc>;
  /** Every HNS namespace and the endpoints it lists (ids as HNS gives them). */
  namespaces: Array<{ id: string; endpoints: string[] }>;
  /** Absent where the host could not list them. */
  adapters?: HostAdapter[];
  /**
   * Whether HCS has each compute system a container-attached record names, by container id in lower case; absent
   * (or an id missing) where HCS could not be asked.
   */
  computeSystems?: Record<string, boolean>;
}

export interface StateView {
  stateDir: string;
  snapshot: StateSnapshot;
  /** Each intent's liveness, by intent id. */
  intentLive: Record<string, Liveness>;
  housekeeping: NotedChore[];
  /** The adapter each network bound when the node agent first saw it (state/adapters-seen.ts). */
  adaptersSeen?: AdaptersSeen;
}

/** The resident service as its status request answers, only the parts the doctor judges. */
export interface ServiceView {
  running: boolean;
  address: string;
  /** Why it is not running (the connection's error). */
  reason?: string;
  pid?: number;
  requests?: { queued: number; running: number };
  abandoned?: { count: number; bound: number };
  hnsFailingSince?: string;
  lastAuditAt?: string;
  unserved?: Array<{ stateDir: string; network: string; attachments: number; keptIps: number }>;
  /** The CNI configuration directory it serves networks from; absent when it was given none. */
  confDir?: string;
}

export interface HostView {
  platform: string;
  /** The OS build (os.release()). */
  build?: string;
  plugin: string;
  hnsVersion?: string;
  /** The HNS features (features.ts) this host has. */
  features: string[];
  api?: { version: 1 | 2; reason: string };
  /** Why the addon did not load, or HNS could not be asked. */
  error?: string;
  confSource: string;
}

export interface DoctorSnapshot {
  /** When it was read (ms since epoch). */
  at: number;
  /** How long an endpoint may stay attached to nothing (a create is attached right after it). */
  graceMs: number;
  host: HostView;
  hns?: HnsView;
  hnsError?: string;
  /** Absent when the state directory does not exist. */
  state?: StateView;
  service?: ServiceView;
  /**
   * When each endpoint was first seen attached to nothing (ms since epoch), by id in lower case, by whoever looks
   * repeatedly (the node agent); a single look knows no age.
   */
  unattachedSince?: Record<string, number>;
}
