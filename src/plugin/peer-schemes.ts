/**
 * The previous plugins' endpoint names, and the one rule by which a DEL or GC may act on an endpoint so named.
 *
 * Each scheme's name, from the peer's own source:
 *  - win-bridge and win-overlay (containernetworking/plugins pkg/hns/endpoint_windows.go ConstructEndpointName, used
 *    by plugins/main/windows/win-bridge/win-bridge_windows.go and win-overlay/win-overlay_windows.go cmdAdd/cmdDel):
 *    `GetSandboxContainerID(containerID, netNs) + "_" + networkName` — the sandbox id is CNI_CONTAINERID unless
 *    CNI_NETNS is `container:<id>`; networkName is the CNI network's `name`.
 *  - sdnbridge and sdnoverlay (microsoft/windows-container-networking cni/cni.go GetEndpointInfo, with
 *    GetNetworkInfo's `ID: config.Name`): `containerID + "_" + networkInfo.ID` — the same string for a pod sandbox.
 *  - Azure CNI (Azure/azure-container-networking network/endpoint_windows.go ConstructEndpointID, the HNS name in
 *    newEndpointImplHnsV1 and configureHcnEndpoint): `containerID[:8] + "-" + ifName` (the whole id when it is
 *    shorter). A delegated NIC's endpoint is `<first 8>-eth<N>`, N the interface's place in CNS's answer
 *    (cni/network/network.go createEpInfo, `"eth" + strconv.Itoa(opt.endpointIndex)`, over a map, so N is not
 *    predictable): it is recognised by that form on Azure's network for the request's NIC MAC
 *    (src/orphans/peer-networks.ts azureNicNetworkName).
 *
 * No name says whose it is. The CNI spec lets both container ids and network names contain "_" (letters, digits,
 * "_", "." and "-"), so `abc_net_x` is win-bridge's name of pod `abc` on network `net_x` and of pod `abc_net` on
 * network `x`; Azure's eight characters are shared by every pod whose id begins with them. A name is therefore never
 * read back into "the" pod. The rule (peerVerdict), the same for every scheme:
 *  1. the endpoint's name is exactly the name that scheme gives the pod the request is about (computed from the
 *     request's container id, ifname and network name, compared whole);
 *  2. an endpoint attached to anything is acted on only when attached to what the request holds: the HCN namespace
 *     its CNI_NETNS names, or its own sandbox container (CNI_CONTAINERID, hot-attached; workload containers of the
 *     sandbox may be attached beside it). A request without CNI_NETNS holds nothing, so it never removes an attached
 *     endpoint; nor does GC, which is asked about pods it holds nothing of. A namespace that no longer exists holds
 *     nothing either. When HNS cannot say which containers an endpoint is attached to, it is left.
 * Azure's names are acted on only with the operator's opt-in (`adopt: ["azure"]`), since the eight characters name
 * many pods by design.
 */
import type { AdoptPeer } from '../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { unlessRefused } from '../hns/hcn-error';
import { parseOwnedName } from '../orphans/ownership';
import { parseNetns } from './netns';

export type PeerScheme = 'win-bridge/sdnbridge' | 'azure';

export interface PeerName {
  scheme: PeerScheme;
  name: string;
  /** Many pods share the name by design (Azure's eight characters): acted on only with the opt-in (`adopt`). */
  ambiguous: boolean;
}

/** The pod a request is about: a DEL's own, or the one pod GC reads a name as (peerPodOf). */
export interface PeerPod {
  containerId: string;
  /** Unknown for a pod GC reads out of a win-bridge name (that name has no ifname). */
  ifname?: string;
}

/** The CNI spec's rule for container ids and network names (src/cni/env.ts CONTAINER_ID_PATTERN). */
const CNI_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** How much of the container id Azure's names keep (ConstructEndpointID). */
const AZURE_ID_CHARS = 8;

/** win-bridge, win-overlay: pkg/hns ConstructEndpointName (the sandbox's id for a pod sandbox). */
export function winBridgeEndpointName(sandboxId: string, network: string): string {
  return `${sandboxId}_${network}`;
}

/** sdnbridge, sdnoverlay: cni/cni.go GetEndpointInfo, `containerID + "_" + networkInfo.ID`. */
export function sdnbridgeEndpointName(containerId: string, network: string): string {
  return `${containerId}_${network}`;
}

/** Azure CNI: network/endpoint_windows.go ConstructEndpointID, `containerID[:8] + "-" + ifName`. */
export function azureEndpointName(containerId: string, ifname: string): string {
  return `${containerId.slice(0, AZURE_ID_CHARS)}-${ifname}`;
}

/** Azure's endpoint of a pod's delegated NIC: `<first 8>-eth<N>` (cni/network/network.go createEpInfo). */
export function isAzureNicEndpointName(name: string, containerId: string): boolean {
  const prefix = `${containerId.slice(0, AZURE_ID_CHARS)}-eth`;
  return name.startsWith(prefix) && /^[0-9]+$/.test(name.slice(prefix.length));
}

/** The names the peers give this pod's endpoint (none for a workload container sharing its sandbox's). */
export function peerEndpointNames(pod: PeerPod, netns: string | undefined, network: string): PeerName[] {
  if (netns?.startsWith('container:')) return [];
  // For a pod sandbox win-bridge's and sdnbridge's names are one string: one entry stands for both.
  const bridge = new Set([
    winBridgeEndpointName(pod.containerId, network),
    sdnbridgeEndpointName(pod.containerId, network),
  ]);
  return [
    ...[...bridge].map((name) => ({ scheme: 'win-bridge/sdnbridge' as const, name, ambiguous: false })),
    ...(pod.ifname !== undefined
      ? [{ scheme: 'azure' as const, name: azureEndpointName(pod.containerId, pod.ifname), ambiguous: true }]
      : []),
  ];
}

/** Whether a scheme may be acted on under this configuration (the ambiguous ones need `adopt`). */
export function adopted(scheme: PeerScheme, adopt: readonly AdoptPeer[]): boolean {
  return scheme !== 'azure' || adopt.includes('azure');
}

/** The request a peer's endpoint is judged against. */
export interface PeerRequest {
  pod: PeerPod;
  /** The CNI network's name (`name` of the configuration). */
  network: string;
  /** CNI_NETNS as given; undefined or "" for a DEL without it, and for GC. */
  netns: string | undefined;
  /** Azure's network for the request's delegated NIC, on which `<first 8>-eth<N>` is that pod's (delegatedNic mode). */
  azureNicNetworkId?: string;
}

/** The scheme under which the endpoint's name is exactly the one the request's pod would have, if any. */
export function schemeNaming(ep: Pick<EndpointInfo, 'name' | 'networkId'>, req: PeerRequest): PeerScheme | undefined {
  const hit = peerEndpointNames(req.pod, req.netns, req.network).find((n) => n.name === ep.name);
  if (hit) return hit.scheme;
  if (
    req.azureNicNetworkId &&
    !req.netns?.startsWith('container:') &&
    sameId(ep.networkId, req.azureNicNetworkId) &&
    isAzureNicEndpointName(ep.name, req.pod.containerId)
  )
    return 'azure';
  return undefined;
}

/** The pod's endpoints under the peers' schemes, in one listing (adopted or not: their addresses count for rule 1). */
export function peerEndpointsOf(
  endpoints: readonly EndpointInfo[],
  req: PeerRequest,
): Array<{ scheme: PeerScheme; endpoint: EndpointInfo }> {
  return endpoints.flatMap((e) => {
    const scheme = schemeNaming(e, req);
    return scheme ? [{ scheme, endpoint: e }] : [];
  });
}

/** What a request holds: the HCN namespace its CNI_NETNS names, its own sandbox container; nothing without CNI_NETNS. */
function holdings(pod: PeerPod, netns: string | undefined): { namespaceId?: string; containerId?: string } {
  if (!netns) return {};
  try {
    const t = parseNetns(netns);
    if (t.kind === 'namespace') return { namespaceId: t.namespaceId, containerId: pod.containerId };
    if (t.kind === 'container') return { containerId: pod.containerId };
  } catch {
    // A CNI_NETNS that names nothing holds nothing.
  }
  return {};
}

/**
 * Rule 2: why the endpoint must be left because it is attached to what the request does not hold, or undefined.
 * `containers`: what HNS v1 says it is attached to (undefined: HNS could not say). The endpoint's namespaceId is
 * taken as given: a caller that learnt the namespace no longer exists passes the endpoint without it.
 */
export function attachedElsewhere(
  ep: Pick<EndpointInfo, 'namespaceId'>,
  containers: readonly string[] | undefined,
  pod: PeerPod,
  netns: string | undefined,
): string | undefined {
  const held = holdings(pod, netns);
  if (ep.namespaceId && !sameId(ep.namespaceId, held.namespaceId)) {
    return `it is in HCN namespace ${ep.namespaceId}, and this request names ${netns ? `CNI_NETNS ${JSON.stringify(netns)}` : 'none'}`;
  }
  if (containers === undefined) return 'HNS could not say which containers it is attached to';
  if (containers.length > 0 && !containers.some((c) => sameId(c, held.containerId))) {
    return `it is attached to container ${containers[0]}, ${held.containerId ? `not to ${held.containerId}` : 'and this request names none'}`;
  }
  return undefined;
}

export type PeerVerdict =
  { act: true; scheme: PeerScheme } | { act: false; scheme?: PeerScheme; reason: string; elsewhere: boolean };

/**
 * The one predicate of DEL and GC (rules 1 and 2 above, and the opt-in). `elsewhere`: the endpoint is attached to
 * what the request does not hold, so it is another pod's (its address is not this pod's allocation).
 */
export function peerVerdict(
  ep: Pick<EndpointInfo, 'name' | 'networkId' | 'namespaceId'>,
  containers: readonly string[] | undefined,
  req: PeerRequest,
  adopt: readonly AdoptPeer[],
): PeerVerdict {
  const scheme = schemeNaming(ep, req);
  if (!scheme)
    return { act: false, reason: `its name is not a peer's name of pod ${req.pod.containerId}`, elsewhere: true };
  if (!adopted(scheme, adopt))
    return {
      act: false,
      scheme,
      reason: `its name is Azure CNI's scheme, which another pod may share; "adopt": ["azure"] allows removing it`,
      elsewhere: false,
    };
  const why = attachedElsewhere(ep, containers, req.pod, req.netns);
  return why ? { act: false, scheme, reason: why, elsewhere: true } : { act: true, scheme };
}

/**
 * What HNS says the endpoint is attached to, for peerVerdict: its namespace unless that no longer exists (asked only
 * when it is not the one the request holds), and the containers HNS v1 lists (undefined: HNS could not say).
 */
export async function attachmentOf(
  api: HnsApi,
  ep: EndpointInfo,
  req: Pick<PeerRequest, 'pod' | 'netns'>,
): Promise<{ endpoint: EndpointInfo; containers: string[] | undefined }> {
  let endpoint = ep;
  if (ep.namespaceId && !sameId(ep.namespaceId, holdings(req.pod, req.netns).namespaceId)) {
    if (!(await api.namespaceExists(ep.namespaceId))) {
      endpoint = { ...ep };
      delete endpoint.namespaceId;
    }
  }
  return { endpoint, containers: ep.containers ?? (await containersOf(api, ep.id)) };
}

/** The containers HNS v1 says an endpoint is attached to (the HCN listing does not show them); undefined: unknown. */
export async function containersOf(api: HnsApi, endpointId: string): Promise<string[] | undefined> {
  if (api.hotAttachUnavailable()) return undefined;
  return unlessRefused(
    api.endpointContainers(endpointId).then((c) => c ?? []),
    () => undefined,
  );
}

/** One way to read a name back into a pod (peerPodOf). */
interface Reading {
  scheme: PeerScheme;
  containerId?: string;
  idPrefix?: string;
  ifname?: string;
  /** win-bridge/sdnbridge: the CNI network the name ends with. */
  network?: string;
}

/** Every scheme's reading of a name: each "_" may be win-bridge's separator, and Azure's form may fit too. */
function readingsOf(name: string): Reading[] {
  if (parseOwnedName(name)) return [];
  const readings: Reading[] = [];
  for (let i = name.indexOf('_'); i > 0; i = name.indexOf('_', i + 1)) {
    const id = name.slice(0, i);
    const network = name.slice(i + 1);
    if (CNI_NAME.test(id) && CNI_NAME.test(network) && winBridgeEndpointName(id, network) === name)
      readings.push({ scheme: 'win-bridge/sdnbridge', containerId: id, network });
  }
  const idPrefix = name.slice(0, AZURE_ID_CHARS);
  const ifname = name.slice(AZURE_ID_CHARS + 1);
  if (
    name[AZURE_ID_CHARS] === '-' &&
    /^[A-Za-z0-9_.-]+$/.test(ifname) &&
    CNI_NAME.test(idPrefix) &&
    azureEndpointName(idPrefix, ifname) === name
  )
    readings.push({ scheme: 'azure', idPrefix, ifname });
  return readings;
}

/**
 * GC's request names no pod: the one pod a name can be is what GC asks about — when the name is exactly one
 * scheme's name of exactly one pod (and, for win-bridge/sdnbridge, on this network). A name with more than one
 * reading (a "_" besides the separator, or a name both schemes could give) is no one pod's: GC leaves it. Names of
 * ours (any version) are the audit's to judge.
 *
 * `hnsNetwork`, the name of the HNS network the endpoint is on, decides between win-bridge/sdnbridge readings: those
 * plugins put a pod's endpoint on the HNS network named as its CNI network (containernetworking/plugins
 * plugins/main/windows/win-bridge/win-bridge_windows.go cmdHcnAdd and cmdHnsAdd look the network up by `n.Name`, the
 * name ConstructEndpointName ends with; microsoft/windows-container-networking cni/cni.go GetNetworkInfo,
 * `Name: config.Name`). So `abc_net_x` on the network net_x is pod abc's of net_x, never pod abc_net's of x, whose
 * endpoint would be on a network named x. Only a name with more than one reading is read so (compared without case,
 * so that a reading is dropped only when no spelling of its network is the endpoint's); Azure's reading is never
 * dropped (its networks are not named after the CNI network), so a name both schemes could give stays no one's on
 * the network win-bridge's reading names, and is Azure's alone (acted on only with `adopt`) on any other.
 */
export function peerPodOf(
  name: string,
  cniNetwork: string,
  hnsNetwork?: string,
): { scheme: PeerScheme; containerId?: string; idPrefix?: string; ifname?: string } | undefined {
  const all = readingsOf(name);
  const readings =
    all.length > 1 && hnsNetwork !== undefined
      ? all.filter((r) => r.network === undefined || r.network.toLowerCase() === hnsNetwork.toLowerCase())
      : all;
  if (readings.length !== 1) return undefined;
  const [only] = readings;
  if (only!.network !== undefined && only!.network !== cniNetwork) return undefined;
  const { network: _network, ...pod } = only!;
  return pod;
}

/** Whether the HNS network an endpoint is on may decide how GC of `cniNetwork` reads its name (peerPodOf). */
export function networkMayDecide(name: string, cniNetwork: string): boolean {
  const all = readingsOf(name);
  return all.length > 1 && all.some((r) => r.network === cniNetwork);
}
