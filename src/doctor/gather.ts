/**
 * The doctor's one read of the node: HNS (every network, endpoint and namespace whatever its owner, the host's
 * adapters, each endpoint's DNS and policies), the state directory and the service, into a snapshot of plain data
 * (snapshot.ts). Nothing here changes anything: no delete, no write to HNS. Reading the state is what every verb
 * does, so an unreadable record is moved to quarantine on the way, as `hcn-cni state` does.
 */
import { endpointsOfListing, type EndpointListing, type HnsApi } from '../hns/api';
import { toTyped } from '../hns/policies';
import { formatVersion, HNS_FEATURES, supports, type HnsVersion } from '../hns/features';
import type { FlatPolicy, HnsV1Endpoint, HnsV1Namespace, HostComputeEndpoint, TypedPolicy } from '../hns/schema';
import type { AdaptersSeen } from '../state/adapters-seen';
import type { NotedChore } from '../state/housekeeping';
import { intentLiveness, type Liveness } from '../state/liveness';
import { ownerKey, type AttachmentRecord } from '../state/records';
import type { StateSnapshot } from '../state/store';
import type { DoctorSnapshot, EndpointDoc, HnsView, HostView, ServiceView, StateView } from './snapshot';

export interface DoctorDeps {
  /** The HNS API the configuration selects, and why (asks HNS its version on "auto"). */
  hns(): Promise<{ api: HnsApi; version: 1 | 2; reason: string; hnsVersion?: HnsVersion }>;
  /** The state directory's reads; absent when it does not exist. */
  state?: { dir: string; snapshot(): StateSnapshot; housekeeping(): NotedChore[]; adaptersSeen?(): AdaptersSeen };
  processStartTime(pid: number): string | null;
  clock: { now(): number };
  /** The service's status; rejects when no service answers. Absent: not asked (the service asking itself). */
  service?(): Promise<ServiceView>;
  host: Pick<HostView, 'platform' | 'build' | 'plugin' | 'confSource' | 'error'>;
  graceMs: number;
  /** When each of these endpoints was first seen attached to nothing (the node agent remembers; see snapshot.ts). */
  unattachedSince?(ids: readonly string[], now: number): Record<string, number>;
}

export async function gather(deps: DoctorDeps): Promise<DoctorSnapshot> {
  const at = deps.clock.now();
  const host: HostView = { ...deps.host, features: [] };
  const snap: DoctorSnapshot = { at, graceMs: deps.graceMs, host };
  let api: HnsApi | undefined;
  if (!host.error) {
    try {
      const choice = await deps.hns();
      api = choice.api;
      host.api = { version: choice.version, reason: choice.reason };
      if (choice.hnsVersion) {
        host.hnsVersion = formatVersion(choice.hnsVersion);
        host.features = HNS_FEATURES.filter((f) => supports(choice.hnsVersion, f));
      }
      snap.hns = await readHns(choice.api, choice.version);
    } catch (e) {
      snap.hnsError = (e as Error).message;
    }
  }
  if (deps.state) snap.state = readState(deps.state, at, deps.processStartTime);
  if (api && snap.hns && snap.state) {
    const computeSystems = await askComputeSystems(api, snap.state.snapshot.attachments);
    if (computeSystems) snap.hns.computeSystems = computeSystems;
  }
  if (deps.service) snap.service = await deps.service();
  if (snap.hns && deps.unattachedSince) {
    const ids = snap.hns.endpoints.filter((e) => !e.namespaceId && !e.containers?.length).map((e) => e.id);
    snap.unattachedSince = deps.unattachedSince(ids, at);
  }
  return snap;
}

/**
 * One listing of each kind. The endpoints' DNS and policies come from the endpoint listing itself (v1's GET /endpoints/
 * holds them as HCN's documents do), not from a second listing of HCN's: that cost 2N+1 more calls (an enumerate,
 * then an open and a query per endpoint) at every look of the node agent's.
 */
async function readHns(api: HnsApi, apiVersion: 1 | 2): Promise<HnsView> {
  const [networks, listing, namespaces, adapters] = await Promise.all([
    api.listNetworks(),
    api.listEndpointDocuments(),
    listNamespaces(api),
    // A host without the adapter listing still has its other checks.
    api.listAdapters().catch(() => undefined),
  ]);
  const endpoints = endpointsOfListing(listing);
  const endpointDocs = docsOfListing(listing);
  return { apiVersion, networks, endpoints, namespaces, endpointDocs, ...(adapters ? { adapters } : {}) };
}

/**
 * Whether HCS still has each container a pod of ours was hot-attached to (one open and close each): the only way the
 * node tells a container-attached pod's sandbox gone, since HNS keeps the endpoint's SharedContainers as they were.
 * A container HCS could not be asked about is left out (unknown, not gone).
 */
async function askComputeSystems(
  api: HnsApi,
  records: readonly AttachmentRecord[],
): Promise<Record<string, boolean> | undefined> {
  const ids = new Set(
    records.filter((r) => r.mode !== 'shared' && r.attach.kind === 'container').map((r) => r.attach.target),
  );
  if (ids.size === 0) return undefined;
  const out: Record<string, boolean> = {};
  for (const id of ids) {
    const exists = await api.computeSystemExists(id).catch(() => undefined);
    if (exists !== undefined) out[id.toLowerCase()] = exists;
  }
  return out;
}

function readState(state: NonNullable<DoctorDeps['state']>, at: number, startTimeOf: (pid: number) => string | null) {
  const snapshot = state.snapshot();
  const tombs = new Map(snapshot.tombstones.map((t) => [ownerKey(t), t]));
  const intentLive: Record<string, Liveness> = {};
  for (const i of snapshot.intents) intentLive[i.id] = intentLiveness(i, tombs.get(ownerKey(i)), at, startTimeOf);
  const view: StateView = { stateDir: state.dir, snapshot, intentLive, housekeeping: state.housekeeping() };
  if (state.adaptersSeen) view.adaptersSeen = state.adaptersSeen();
  return view;
}

/** Every namespace with the endpoints it lists: HCN, or HNSCall GET /namespaces/ on a v1 host. */
async function listNamespaces(api: HnsApi): Promise<HnsView['namespaces']> {
  const endpointsOf = (resources: ReadonlyArray<{ Type?: unknown; Data?: { Id?: unknown } }>) =>
    resources.filter((r) => String(r.Type).toLowerCase() === 'endpoint').map((r) => String(r.Data?.Id ?? ''));
  if (api.version === 2) {
    return (await api.hcn.listNamespaces()).map((ns) => ({
      id: String(ns.ID ?? ''),
      endpoints: endpointsOf(ns.Resources ?? []),
    }));
  }
  const v1 = (await api.hcn.hnsCall<HnsV1Namespace[]>('GET', '/namespaces/')) ?? [];
  return v1.map((ns) => ({
    id: String(ns.ID ?? ''),
    endpoints: endpointsOf((ns.ResourceList ?? []) as Array<{ Type?: unknown; Data?: { Id?: unknown } }>),
  }));
}

/** Each endpoint's DNS and policies, by id in lower case, from the listing's documents (HCN's, or v1's). */
function docsOfListing(listing: EndpointListing): Record<string, EndpointDoc> {
  const out: Record<string, EndpointDoc> = {};
  if (listing.view === 2) for (const e of listing.docs) out[String(e.ID ?? '').toLowerCase()] = docOfV2(e);
  else for (const e of listing.docs) out[String(e.ID ?? '').toLowerCase()] = docOfV1(e);
  return out;
}

function docOfV2(e: HostComputeEndpoint): EndpointDoc {
  return {
    dns: {
      servers: [...(e.Dns?.ServerList ?? [])],
      search: [...(e.Dns?.Search ?? [])],
      ...(e.Dns?.Domain ? { domain: e.Dns.Domain } : {}),
    },
    policies: (e.Policies ?? []).map((p) => ({ Type: p.Type, ...(p.Settings ? { Settings: p.Settings } : {}) })),
    ...(typeof e.Flags === 'number' ? { flags: e.Flags } : {}),
  };
}

/**
 * v1 shows the search list as one comma-separated DNSSuffix and the domain in DNSDomain (hns/v1/endpoint.ts), and the
 * policies in their flat v1 form, read back into the typed form with the plugin's one mapping (hns/policies.ts); a
 * policy that mapping cannot read is kept with its fields as they are.
 */
function docOfV1(e: HnsV1Endpoint): EndpointDoc {
  const split = (s: string | undefined) =>
    s
      ? s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : [];
  return {
    dns: {
      servers: split(e.DNSServerList),
      search: split(e.DNSSuffix),
      ...(e.DNSDomain ? { domain: e.DNSDomain } : {}),
    },
    policies: (e.Policies ?? []).map(typedOrAsIs),
    policiesView: 1,
    ...(e.IsRemoteEndpoint === true ? { flags: 1 } : {}),
  };
}

function typedOrAsIs(p: FlatPolicy): TypedPolicy {
  try {
    return toTyped(p);
  } catch {
    const { Type, ...rest } = p;
    return { Type: String(Type), Settings: rest };
  }
}
