/**
 * GC on a migrated node: the previous plugin's endpoints of pods the runtime no longer lists as valid, found by that
 * plugin's naming scheme (peer-endpoints.ts), as the DEL those pods never got would have removed them.
 *
 * GC names no namespace or container, so "provably that pod's, and that pod is gone" needs more than the name: only
 * an endpoint attached to nothing — no HCN namespace that still exists, no container (HNS v1 SharedContainers) — is
 * removed. One still attached may be a pod another runtime on the node runs with a configuration of the same name;
 * it stays, as does its address. Its IPAM allocation is not released here: the name does not say the ifname (win-
 * bridge, sdnbridge) or the full container id (Azure) that IPAM keys it by; GC is forwarded to IPAM as always.
 */
import type { Attachment, NetConf } from '../cni/types';
import type { EndpointInfo, HnsApi } from '../hns/api';
import { isUnreachable } from '../hns/hcn-error';
import type { Logger } from '../log/logger';
import { parseOwnedName } from '../orphans/ownership';
import { adopted, containersOf, removeEndpoint, type PeerScheme } from './peer-endpoints';

/** The spec's rule for CNI_CONTAINERID (src/cni/env.ts CONTAINER_ID_PATTERN, which this layer may not import). */
const CONTAINER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface GcPeersReport {
  deleted: string[];
  errors: string[];
}

/** The pod a peer's endpoint name is for, when it is one of this network's under a peer's scheme. */
export function peerPodOf(
  name: string,
  cniNetwork: string,
): { scheme: PeerScheme; containerId?: string; idPrefix?: string; ifname?: string } | undefined {
  // A name of ours (any version) is the audit's to judge, never a peer's.
  if (parseOwnedName(name)) return undefined;
  const suffix = `_${cniNetwork}`;
  if (name.endsWith(suffix)) {
    const containerId = name.slice(0, -suffix.length);
    if (CONTAINER_ID_PATTERN.test(containerId)) return { scheme: 'win-bridge/sdnbridge', containerId };
  }
  // Azure: exactly eight characters of the id, "-", the ifname (network/endpoint_windows.go ConstructEndpointID).
  const idPrefix = name.slice(0, 8);
  const ifname = name.slice(9);
  if (name[8] === '-' && ifname !== '' && CONTAINER_ID_PATTERN.test(idPrefix) && /^[A-Za-z0-9_.-]+$/.test(ifname))
    return { scheme: 'azure', idPrefix, ifname };
  return undefined;
}

export async function gcPeerEndpoints(
  api: HnsApi,
  conf: Pick<NetConf, 'name' | 'adopt'>,
  valid: readonly Attachment[],
  log: Logger,
): Promise<GcPeersReport> {
  const report: GcPeersReport = { deleted: [], errors: [] };
  const endpoints = await api.listEndpoints();
  for (const ep of endpoints) {
    const pod = peerPodOf(ep.name, conf.name);
    if (!pod || !adopted(pod.scheme, conf.adopt)) continue;
    const stillValid = valid.some((a) =>
      pod.containerId !== undefined
        ? a.containerId === pod.containerId
        : // Any valid pod whose id begins so protects every one of them (its delegated NICs are eth<N>, not its ifname).
          a.containerId.startsWith(pod.idPrefix!),
    );
    if (stillValid) continue;
    try {
      const why = await attachedToAnything(api, ep);
      if (why) {
        log.info(
          { peer: pod.scheme, endpoint: ep.id, name: ep.name, reason: why },
          "GC leaves the previous plugin's endpoint of a pod not listed as valid: it is still attached",
        );
        continue;
      }
      await removeEndpoint(api, ep, [], undefined);
      report.deleted.push(`endpoint ${ep.name}`);
      log.warn(
        { peer: pod.scheme, endpoint: ep.id, name: ep.name, ips: ep.ips.map((i) => i.address) },
        "GC removed the previous plugin's endpoint of a pod not listed as valid; its IPAM allocation is IPAM's GC's",
      );
    } catch (e) {
      if (isUnreachable(e)) throw e;
      report.errors.push(`removing the previous plugin's endpoint ${ep.name}: ${(e as Error).message}`);
    }
  }
  return report;
}

/** Why an endpoint is in use (a namespace that still exists, a container), or undefined when attached to nothing. */
async function attachedToAnything(api: HnsApi, ep: EndpointInfo): Promise<string | undefined> {
  if (ep.namespaceId && (await api.namespaceExists(ep.namespaceId))) return `in HCN namespace ${ep.namespaceId}`;
  const containers = ep.containers ?? (await containersOf(api, ep.id));
  if (containers === undefined) return 'HNS could not say which containers it is attached to';
  return containers.length > 0 ? `attached to container ${containers[0]}` : undefined;
}
