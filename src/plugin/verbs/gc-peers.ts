/**
 * GC on a migrated node: the previous plugin's endpoints of pods the runtime no longer lists as valid, as the DEL
 * those pods never got would have removed them.
 *
 * GC's request names no pod, so it asks about the one pod a name can be (peer-schemes.ts peerPodOf: a name with
 * more than one reading on the network the endpoint is on is no one pod's, and is left) and judges the endpoint by the same rule as a DEL of that pod
 * without CNI_NETNS (peer-schemes.ts peerVerdict): GC holds nothing of the pod, so only an endpoint attached to
 * nothing — no HCN namespace that still exists, no container (HNS v1 SharedContainers) — is removed. One still
 * attached may be a pod another runtime on the node runs with a configuration of the same name; it stays, as does its
 * address. Its IPAM allocation is not released here: the name does not say the ifname (win-bridge, sdnbridge) or the
 * full container id (Azure) that IPAM keys it by; GC is forwarded to IPAM as always.
 */
import type { Attachment, NetConf } from '../../cni/types';
import type { HnsApi } from '../../hns/api';
import { isUnreachable } from '../../hns/hcn-error';
import { removeEndpoint } from '../../hns/teardown';
import type { Logger } from '../../log/logger';
import type { PeerDeps, PeerEndpoint } from '../peer-endpoints';
import {
  adopted,
  attachmentOf,
  networkMayDecide,
  peerEndpointNames,
  peerPodOf,
  peerVerdict,
  type PeerRequest,
} from '../peer-schemes';

export interface GcPeersReport {
  deleted: string[];
  errors: string[];
}

export async function gcPeerEndpoints(
  api: HnsApi,
  conf: Pick<NetConf, 'name' | 'adopt'>,
  valid: readonly Attachment[],
  log: Logger,
): Promise<GcPeersReport> {
  const report: GcPeersReport = { deleted: [], errors: [] };
  const endpoints = await api.listEndpoints();
  // The names the valid pods have under every scheme, computed, not read back out of the names.
  const validNames = new Set(valid.flatMap((a) => peerEndpointNames(a, undefined, conf.name).map((n) => n.name)));
  const networkName = networkNames(api);
  for (const ep of endpoints) {
    const hnsNetwork = networkMayDecide(ep.name, conf.name) ? await networkName(ep.networkId) : undefined;
    const pod = peerPodOf(ep.name, conf.name, hnsNetwork);
    if (!pod || !adopted(pod.scheme, conf.adopt) || validNames.has(ep.name)) continue;
    // Azure: any valid pod whose id begins so protects every one of them (its delegated NICs are eth<N>, not its
    // ifname).
    if (pod.idPrefix !== undefined && valid.some((a) => a.containerId.startsWith(pod.idPrefix!))) continue;
    const req: PeerRequest = {
      pod: {
        containerId: pod.containerId ?? pod.idPrefix!,
        ...(pod.ifname !== undefined ? { ifname: pod.ifname } : {}),
      },
      network: conf.name,
      netns: undefined,
    };
    try {
      if (await removeUnattached({ api, log }, { scheme: pod.scheme, endpoint: ep }, req, conf.adopt))
        report.deleted.push(`endpoint ${ep.name}`);
    } catch (e) {
      if (isUnreachable(e)) throw e;
      report.errors.push(`removing the previous plugin's endpoint ${ep.name}: ${(e as Error).message}`);
    }
  }
  return report;
}

/**
 * The names of HNS's networks by id, listed once and only when a name needs them (a name with more than one reading:
 * peer-schemes.ts peerPodOf); undefined for a network that is gone.
 */
function networkNames(api: HnsApi): (id: string) => Promise<string | undefined> {
  let byId: Promise<Map<string, string>> | undefined;
  return async (id) => {
    byId ??= api.listNetworks().then((ns) => new Map(ns.map((n) => [n.id.toLowerCase(), n.name])));
    return (await byId).get(id.toLowerCase());
  };
}

/** Removes the previous plugin's endpoint of a pod not listed as valid, unless it is still attached; says which. */
async function removeUnattached(
  d: PeerDeps,
  found: PeerEndpoint,
  req: PeerRequest,
  adopt: NetConf['adopt'],
): Promise<boolean> {
  const { api, log } = d;
  const { scheme, endpoint: ep } = found;
  const { endpoint, containers } = await attachmentOf(api, ep, req);
  const verdict = peerVerdict(endpoint, containers, req, adopt);
  if (!verdict.act) {
    log.info(
      { peer: scheme, endpoint: ep.id, name: ep.name, reason: verdict.reason },
      "GC leaves the previous plugin's endpoint of a pod not listed as valid: it is still attached",
    );
    return false;
  }
  await removeEndpoint(api, ep.id, { namespaceId: ep.namespaceId });
  log.warn(
    { peer: scheme, endpoint: ep.id, name: ep.name, ips: ep.ips.map((i) => i.address) },
    "GC removed the previous plugin's endpoint of a pod not listed as valid; its IPAM allocation is IPAM's GC's",
  );
  return true;
}
