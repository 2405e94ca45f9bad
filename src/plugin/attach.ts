/**
 * Attaching an endpoint where the netns says (see netns.ts), checking that it is there, and detaching it.
 * A Docker sandbox gets the endpoint's vNIC hot-added through HCS, whichever API created the endpoint, as the
 * reference plugins do (containernetworking/plugins pkg/hns/endpoint_windows.go AddHnsEndpoint → hcsshim
 * HotAttachEndpoint): HNS v1's `/endpoints/{id}/attach` only records the container in SharedContainers and adds no
 * vNIC to a running container, so the pod would have no network while ADD reports success.
 */
import { CniCode, CniError } from '../cni/cni-error';
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { hasCode, isComputeSystemMissing } from '../hns/hcn-error';
import { HR } from '../hns/hresults';
import { detachEndpoint, type AttachedTo } from '../hns/teardown';
import type { AttachmentRecord } from '../state/records';
import type { AttachTarget } from './netns';

export type RecordedAttach = AttachmentRecord['attach'];

export function recordedAttach(target: Exclude<AttachTarget, { kind: 'shared' }>, containerId: string): RecordedAttach {
  return target.kind === 'namespace'
    ? { kind: 'namespace', target: target.namespaceId }
    : { kind: 'container', target: containerId };
}

function needHotAttach(api: HnsApi): void {
  const missing = api.hotAttachUnavailable();
  if (missing) {
    throw new CniError(
      CniCode.API_UNAVAILABLE,
      `attaching to a Docker-style sandbox (CNI_NETNS "none") hot-adds the endpoint through HCS and needs ${missing}, which this host lacks`,
    );
  }
}

/** Whether the endpoint is attached as recorded. */
export async function isAttached(api: HnsApi, ep: EndpointInfo, attach: RecordedAttach): Promise<boolean> {
  if (attach.kind === 'none') return true;
  if (attach.kind === 'container') {
    const containers = await api.endpointContainers(ep.id);
    return !!containers?.some((c) => c.toLowerCase() === attach.target.toLowerCase());
  }
  if (ep.namespaceId) return sameId(ep.namespaceId, attach.target);
  // Some views do not show the namespace on the endpoint: ask the namespace instead.
  return api.namespaceHasEndpoint(attach.target, ep.id);
}

/**
 * Attaches unless already attached (a repeated ADD re-verifies instead of failing on "already attached"). An
 * endpoint this ADD has just created is attached to nothing: `fresh` skips asking for namespaces (hot attach asks
 * anyway, as hcsshim's HotAttachEndpoint does).
 */
export async function ensureAttached(
  api: HnsApi,
  ep: EndpointInfo,
  attach: RecordedAttach,
  options: { fresh?: boolean } = {},
): Promise<void> {
  if (attach.kind === 'none') return;
  if (attach.kind === 'container') {
    needHotAttach(api);
    let outcome;
    try {
      outcome = await api.hotAttach(ep.id, attach.target);
    } catch (e) {
      if (isComputeSystemMissing(e)) {
        // CNI error 3: the runtime need not clean up (nothing of this ADD is left: the caller undoes the endpoint).
        throw new CniError(
          CniCode.UNKNOWN_CONTAINER,
          `container ${attach.target} does not exist in HCS (it stopped or was removed before its network was attached)`,
          '',
          { cause: e },
        );
      }
      throw e;
    }
    if (outcome === 'endpoint-gone')
      throw new CniError(CniCode.HNS_FAILURE, `endpoint ${ep.id} vanished from HNS before it could be attached`);
    return;
  }
  if (!options.fresh && (await isAttached(api, ep, attach))) return;
  try {
    await api.attachNamespace(ep.id, attach.target);
  } catch (e) {
    if (hasCode(e, HR.ERROR_NOT_FOUND)) {
      throw new CniError(
        CniCode.HNS_FAILURE,
        `HCN namespace ${attach.target} does not exist (CNI_NETNS); the runtime must create it before ADD`,
      );
    }
    throw e;
  }
}

/** What a recorded attachment is attached to, in the facade's terms. */
function attachedTo(attach: RecordedAttach): AttachedTo {
  if (attach.kind === 'namespace') return { namespaceId: attach.target };
  if (attach.kind === 'container') return { containerId: attach.target };
  return {};
}

/** Detaches as recorded (src/hns/teardown.ts: a missing endpoint, namespace, container or attachment is detached). */
export function detach(api: HnsApi, endpointId: string, attach: RecordedAttach): Promise<void> {
  return detachEndpoint(api, endpointId, attachedTo(attach));
}
