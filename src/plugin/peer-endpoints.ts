/**
 * The endpoints the previous plugin of a migrated node made, found by that plugin's own naming scheme, so that the
 * DEL (or GC) of one of its pods removes that pod's endpoint as the peer's DEL would have — and nothing else.
 *
 * The schemes, from each peer's source:
 *  - win-bridge and win-overlay (containernetworking/plugins pkg/hns/endpoint_windows.go ConstructEndpointName, used
 *    by plugins/main/windows/win-bridge/win-bridge_windows.go and win-overlay/win-overlay_windows.go cmdAdd/cmdDel):
 *    `<sandbox id>_<CNI network name>`, the sandbox id being CNI_CONTAINERID unless CNI_NETNS is `container:<id>`
 *    (GetSandboxContainerID).
 *  - sdnbridge and sdnoverlay (microsoft/windows-container-networking cni/cni.go GetEndpointInfo, with
 *    GetNetworkInfo's `ID: config.Name`): `<CNI_CONTAINERID>_<CNI network name>` — the same string.
 *  - Azure CNI (Azure/azure-container-networking network/endpoint_windows.go ConstructEndpointID, the HNS name in
 *    newEndpointImplHnsV1 and configureHcnEndpoint): `<first 8 characters of the container id>-<ifname>` (delegated
 *    NICs: ifname `eth<N>`, cni/network/network.go createEpInfo). Eight characters do not name one pod: another
 *    pod's id may begin with them. So it is acted on only when the operator opts in (`adopt: ["azure"]`). A
 *    delegated NIC's endpoint is `<first 8>-eth<N>`, N the interface's place in CNS's answer (cni/network/network.go
 *    createEpInfo, `"eth" + strconv.Itoa(opt.endpointIndex)`, over a map, so N is not predictable): in
 *    delegatedNic mode it is recognised by that name on Azure's network for the request's NIC MAC
 *    (src/orphans/peer-networks.ts azureNicNetworkName).
 * Whatever the scheme, an endpoint attached to a namespace or container this request does not name is another
 * pod's (or a contradiction): it is left alone, and its address stays allocated (ip-holders.ts).
 *
 * Detached as the peers detach: from its HCN namespace (pkg/hns RemoveHcnEndpoint; windows-container-networking
 * network/manager.go DeleteEndpoint; Azure deleteEndpointImplHnsV2), hot-detached from the sandbox container when
 * HNS v1 says it is attached to it (pkg/hns RemoveHnsEndpoint: HotDetachEndpoint, errors ignored), then deleted.
 */
import type { AdoptPeer, NetConf } from '../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { isUnreachable, unlessNotFound } from '../hns/hcn-error';
import type { Logger } from '../log/logger';
import type { Owner } from '../state/records';
import { endpointsListed } from './confirm-gone';
import { parseNetns } from './netns';

export type PeerScheme = 'win-bridge/sdnbridge' | 'azure';

export interface PeerName {
  scheme: PeerScheme;
  name: string;
  /** The name does not identify one pod (Azure): acted on only with the opt-in, and only when attached as named. */
  ambiguous: boolean;
}

/** The names the peers give this pod's endpoint (none for a workload container sharing its sandbox's). */
export function peerEndpointNames(owner: Owner, netns: string | undefined, cniNetwork: string): PeerName[] {
  if (netns?.startsWith('container:')) return [];
  return [
    { scheme: 'win-bridge/sdnbridge', name: `${owner.containerId}_${cniNetwork}`, ambiguous: false },
    { scheme: 'azure', name: `${owner.containerId.slice(0, 8)}-${owner.ifname}`, ambiguous: true },
  ];
}

/** Whether a scheme may be acted on under this configuration (the ambiguous ones need `adopt`). */
export function adopted(scheme: PeerScheme, adopt: readonly AdoptPeer[]): boolean {
  return scheme !== 'azure' || adopt.includes('azure');
}

export interface PeerEndpoint {
  scheme: PeerScheme;
  endpoint: EndpointInfo;
}

export interface PeerOutcome {
  /** Endpoints of the pod under a peer's scheme that were removed. */
  removed: PeerEndpoint[];
  /**
   * Endpoints under a peer's scheme left alone, with why. `elsewhere`: attached to what this request does not name,
   * so another pod's (its address is not this pod's allocation); else (not adopted, HNS refused) the pod's own, and
   * its address stays allocated.
   */
  kept: Array<PeerEndpoint & { reason: string; elsewhere: boolean }>;
}

/** The pod's endpoints under the peers' schemes, in one listing (adopted or not: their addresses count for rule 1). */
export function peerEndpointsOf(
  endpoints: readonly EndpointInfo[],
  owner: Owner,
  netns: string | undefined,
  cniNetwork: string,
  azureNicNetworkId?: string,
): PeerEndpoint[] {
  const names = peerEndpointNames(owner, netns, cniNetwork);
  if (names.length === 0) return [];
  const prefix = owner.containerId.slice(0, 8);
  const nicEndpoint = (name: string) =>
    name.startsWith(`${prefix}-eth`) && /^[0-9]+$/.test(name.slice(prefix.length + 4));
  return endpoints.flatMap((e): PeerEndpoint[] => {
    const hit = names.find((n) => n.name === e.name);
    if (hit) return [{ scheme: hit.scheme, endpoint: e }];
    if (azureNicNetworkId && sameId(e.networkId, azureNicNetworkId) && nicEndpoint(e.name))
      return [{ scheme: 'azure', endpoint: e }];
    return [];
  });
}

/**
 * Why an endpoint must be left alone although its name is the pod's under a peer's scheme, or undefined when it may
 * be removed: it is attached to a namespace or container this request does not name. A name that identifies the pod
 * (win-bridge, sdnbridge) tolerates a DEL without CNI_NETNS (the spec makes it optional on DEL); an ambiguous one
 * (Azure) must be attached to exactly what the request names, or to nothing.
 */
export function attachedElsewhere(
  ep: EndpointInfo,
  containers: readonly string[] | undefined,
  owner: Owner,
  netns: string | undefined,
  ambiguous: boolean,
): string | undefined {
  let named: string | undefined;
  try {
    const t = netns ? parseNetns(netns) : undefined;
    if (t?.kind === 'namespace') named = t.namespaceId;
  } catch {
    named = undefined;
  }
  if (ep.namespaceId) {
    const same = sameId(ep.namespaceId, named);
    if (!same && (ambiguous || netns)) {
      return `it is in HCN namespace ${ep.namespaceId}, and this request names ${netns ? `CNI_NETNS ${JSON.stringify(netns)}` : 'none'}`;
    }
  }
  if (containers === undefined && ambiguous) return 'HNS could not say which containers it is attached to';
  const others = (containers ?? []).filter((c) => !sameId(c, owner.containerId));
  if (others.length > 0 && !(containers ?? []).some((c) => sameId(c, owner.containerId))) {
    return `it is attached to container ${others[0]}, not to ${owner.containerId}`;
  }
  return undefined;
}

/**
 * DEL: removes the pod's endpoints under the peers' schemes (as each peer's DEL would), leaving alone those attached
 * elsewhere and those of a scheme not adopted. HNS unreachable propagates (the caller answers 11); a refused delete
 * leaves the endpoint in `kept`, so its address is not released.
 */
export async function removePeerEndpoints(
  api: HnsApi,
  conf: Pick<NetConf, 'name' | 'adopt'>,
  owner: Owner,
  netns: string | undefined,
  log: Logger,
  listed?: readonly EndpointInfo[],
  azureNicNetworkId?: string,
): Promise<PeerOutcome> {
  const out: PeerOutcome = { removed: [], kept: [] };
  if (peerEndpointNames(owner, netns, conf.name).length === 0) return out;
  const endpoints = listed ?? (await api.listEndpoints());
  for (const found of peerEndpointsOf(endpoints, owner, netns, conf.name, azureNicNetworkId)) {
    const keep = (reason: string, elsewhere = false) => {
      out.kept.push({ ...found, reason, elsewhere });
      log.warn(
        { peer: found.scheme, endpoint: found.endpoint.id, name: found.endpoint.name, reason },
        "left the previous plugin's endpoint of this pod alone; its address stays allocated",
      );
    };
    if (!adopted(found.scheme, conf.adopt)) {
      keep(`its name is Azure CNI's scheme, which another pod may share; "adopt": ["azure"] allows removing it`);
      continue;
    }
    const ep = found.endpoint;
    const ambiguous = found.scheme === 'azure';
    const containers = ep.containers ?? (await containersOf(api, ep.id));
    const why = attachedElsewhere(ep, containers, owner, netns, ambiguous);
    if (why) {
      keep(why, true);
      continue;
    }
    try {
      await removeEndpoint(api, ep, containers, owner);
      out.removed.push(found);
      log.info(
        { peer: found.scheme, endpoint: ep.id, name: ep.name },
        "removed the previous plugin's endpoint of this pod (its naming scheme names this pod)",
      );
    } catch (e) {
      if (isUnreachable(e)) throw e;
      keep(`HNS refused to remove it: ${(e as Error).message}`);
    }
  }
  return out;
}

/** Detach (namespace, then the sandbox container) and delete; a "not found" must be confirmed by a listing. */
export async function removeEndpoint(
  api: HnsApi,
  ep: EndpointInfo,
  containers: readonly string[] | undefined,
  owner: Owner | undefined,
): Promise<void> {
  if (ep.namespaceId) await unlessNotFound(api.detachNamespace(ep.id, ep.namespaceId));
  const sandbox = owner && containers?.find((c) => sameId(c, owner.containerId));
  if (sandbox && !api.hotAttachUnavailable()) {
    // pkg/hns RemoveHnsEndpoint ignores the hot-detach's error (`_ = hcsshim.HotDetachEndpoint(...)`): so do we,
    // but for HNS being unreachable.
    try {
      await api.hotDetach(ep.id, sandbox);
    } catch (e) {
      if (isUnreachable(e)) throw e;
    }
  }
  if ((await api.deleteEndpoint(ep.id)) === 'not-found') {
    const left = await endpointsListed(api, (x) => sameId(x.id, ep.id));
    if (left.length > 0) throw new Error(`HNS answered "not found" for endpoint ${ep.id}, but still lists it`);
  }
}

/** The containers HNS v1 says an endpoint is attached to (the HCN listing does not show them); undefined: unknown. */
export async function containersOf(api: HnsApi, endpointId: string): Promise<string[] | undefined> {
  if (api.hotAttachUnavailable()) return undefined;
  try {
    return (await api.endpointContainers(endpointId)) ?? [];
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return undefined;
  }
}
