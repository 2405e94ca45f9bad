/**
 * The endpoints the previous plugin of a migrated node made, found by that plugin's own naming scheme, so that the
 * DEL of one of its pods removes that pod's endpoint as the peer's DEL would have — and nothing else. Which names
 * are the pod's, and when an endpoint so named may be acted on, is peer-schemes.ts (one rule for DEL and GC, every
 * scheme): a name is the pod's only when it is exactly what that scheme gives the request's pod, and an attached
 * endpoint only when it is attached to what the request holds; anything else is another pod's (or a contradiction)
 * and is left alone, its address allocated (ip-holders.ts).
 *
 * Detached as the peers detach: from its HCN namespace (pkg/hns RemoveHcnEndpoint; windows-container-networking
 * network/manager.go DeleteEndpoint; Azure deleteEndpointImplHnsV2), hot-detached from the sandbox container when
 * HNS v1 says it is attached to it (pkg/hns RemoveHnsEndpoint: HotDetachEndpoint, errors ignored), then deleted.
 */
import type { NetConf } from '../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { isUnreachable } from '../hns/hcn-error';
import { removeEndpoint } from '../hns/teardown';
import type { Logger } from '../log/logger';
import {
  attachmentOf,
  peerEndpointNames,
  peerEndpointsOf,
  peerVerdict,
  type PeerRequest,
  type PeerScheme,
} from './peer-schemes';

export interface PeerEndpoint {
  scheme: PeerScheme;
  endpoint: EndpointInfo;
}

export interface PeerOutcome {
  /** Endpoints of the pod under a peer's scheme that were removed. */
  removed: PeerEndpoint[];
  /**
   * Endpoints under a peer's scheme left alone, with why. `elsewhere`: attached to what this request does not hold,
   * so another pod's (its address is not this pod's allocation); else (not adopted, HNS refused) the pod's own, and
   * its address stays allocated.
   */
  kept: Array<PeerEndpoint & { reason: string; elsewhere: boolean }>;
}

/**
 * DEL: removes the pod's endpoints under the peers' schemes (as each peer's DEL would), leaving alone those attached
 * elsewhere and those of a scheme not adopted. HNS unreachable propagates (the caller answers 11); a refused delete
 * leaves the endpoint in `kept`, so its address is not released.
 */
export async function removePeerEndpoints(
  d: PeerDeps,
  adopt: NetConf['adopt'],
  request: PeerRequest,
  seen: { listed?: readonly EndpointInfo[]; azureNicNetworkId?: string | undefined } = {},
): Promise<PeerOutcome> {
  const out: PeerOutcome = { removed: [], kept: [] };
  if (peerEndpointNames(request.pod, request.netns, request.network).length === 0) return out;
  const endpoints = seen.listed ?? (await d.api.listEndpoints());
  const req: PeerRequest = {
    ...request,
    ...(seen.azureNicNetworkId ? { azureNicNetworkId: seen.azureNicNetworkId } : {}),
  };
  for (const found of peerEndpointsOf(endpoints, req)) {
    const kept = await removePeerEndpoint(d, found, req, adopt);
    if (kept) out.kept.push({ ...found, ...kept });
    else out.removed.push(found);
  }
  return out;
}

/** What removing a peer's endpoint uses. */
export interface PeerDeps {
  readonly api: HnsApi;
  readonly log: Logger;
}

/**
 * One endpoint of the pod under a peer's scheme: removed when the verdict lets this request act on it (undefined),
 * else kept (why).
 */
async function removePeerEndpoint(
  d: PeerDeps,
  found: PeerEndpoint,
  req: PeerRequest,
  adopt: NetConf['adopt'],
): Promise<{ reason: string; elsewhere: boolean } | undefined> {
  const { api, log } = d;
  const keep = (reason: string, elsewhere: boolean) => {
    log.warn(
      { peer: found.scheme, endpoint: found.endpoint.id, name: found.endpoint.name, reason },
      "left the previous plugin's endpoint of this pod alone; its address stays allocated",
    );
    return { reason, elsewhere };
  };
  const { endpoint: ep, containers } = await attachmentOf(api, found.endpoint, req);
  const verdict = peerVerdict(ep, containers, req, adopt);
  if (!verdict.act) return keep(verdict.reason, verdict.elsewhere);
  try {
    // The endpoint as listed: a namespace that no longer exists is still detached from ("not found" is fine). The
    // sandbox's hot detach is best effort, as pkg/hns RemoveHnsEndpoint's (`_ = hcsshim.HotDetachEndpoint(...)`).
    const sandbox = containers?.find((c) => sameId(c, req.pod.containerId));
    await removeEndpoint(
      api,
      found.endpoint.id,
      { namespaceId: found.endpoint.namespaceId, containerId: sandbox },
      { hotDetach: 'best-effort' },
    );
    log.info(
      { peer: found.scheme, endpoint: ep.id, name: ep.name },
      "removed the previous plugin's endpoint of this pod (its naming scheme names this pod)",
    );
    return undefined;
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return keep(`HNS refused to remove it: ${(e as Error).message}`, false);
  }
}
