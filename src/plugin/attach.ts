/**
 * Attaching an endpoint where the netns says (see netns.ts), checking that it is there, and detaching it.
 * A Docker sandbox is attached through v1 `/endpoints/{id}/attach` whichever API created the endpoint: HCN has no
 * container attach, and HNS lets the two APIs share objects (hcsshim and Microsoft's own scripts mix them too).
 */
import { CniCode, CniError } from '../cni/cni-error';
import { attachContainer, detachContainer, endpointContainers, sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { hasCode, isNotFound } from '../hns/hcn-error';
import type { Hcn } from '../hns/hcn';
import { HR } from '../hns/hresults';
import type { AttachmentRecord } from '../state/records';
import type { AttachTarget } from './netns';

export type RecordedAttach = AttachmentRecord['attach'];

export function recordedAttach(target: Exclude<AttachTarget, { kind: 'shared' }>, containerId: string): RecordedAttach {
  return target.kind === 'namespace' ? { kind: 'namespace', target: target.namespaceId } : { kind: 'container', target: containerId };
}

function needV1(hcn: Hcn): void {
  if (!hcn.capabilities.v1Supported) {
    throw new CniError(
      CniCode.API_UNAVAILABLE,
      'attaching to a Docker-style sandbox (CNI_NETNS "none") needs HNSCall (vmcompute.dll), which this host lacks',
    );
  }
}

/** Whether the endpoint is attached as recorded. */
export async function isAttached(api: HnsApi, ep: EndpointInfo, attach: RecordedAttach): Promise<boolean> {
  if (attach.kind === 'none') return true;
  if (attach.kind === 'container') {
    const containers = await endpointContainers(api.hcn, ep.id);
    return !!containers?.some((c) => c.toLowerCase() === attach.target.toLowerCase());
  }
  if (ep.namespaceId) return sameId(ep.namespaceId, attach.target);
  // Some views do not show the namespace on the endpoint: ask the namespace instead.
  if (api.hcn.capabilities.v2Supported) {
    try {
      const ns = await api.hcn.getNamespace(attach.target);
      return (ns.Resources ?? []).some((r) => r.Type === 'Endpoint' && sameId(r.Data?.Id, ep.id));
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }
  return false;
}

/**
 * Attaches unless already attached (a repeated ADD re-verifies instead of failing on "already attached"). An
 * endpoint this ADD has just created is attached to nothing: `fresh` skips asking.
 */
export async function ensureAttached(api: HnsApi, ep: EndpointInfo, attach: RecordedAttach, options: { fresh?: boolean } = {}): Promise<void> {
  if (!options.fresh && (await isAttached(api, ep, attach))) return;
  if (attach.kind === 'none') return;
  if (attach.kind === 'container') {
    needV1(api.hcn);
    await attachContainer(api.hcn, ep.id, attach.target);
    return;
  }
  try {
    await api.attachNamespace(ep.id, attach.target);
  } catch (e) {
    if (hasCode(e, HR.ERROR_NOT_FOUND)) {
      throw new CniError(CniCode.HNS_FAILURE, `HCN namespace ${attach.target} does not exist (CNI_NETNS); the runtime must create it before ADD`);
    }
    throw e;
  }
}

/** Detaches; a missing endpoint, namespace or attachment counts as detached. */
export async function detach(api: HnsApi, endpointId: string, attach: RecordedAttach): Promise<void> {
  try {
    if (attach.kind === 'namespace') await api.detachNamespace(endpointId, attach.target);
    else if (attach.kind === 'container' && api.hcn.capabilities.v1Supported) await detachContainer(api.hcn, endpointId, attach.target);
  } catch (e) {
    if (isNotFound(e) || hasCode(e, HR.ENDPOINT_NOT_ATTACHED)) return;
    throw e;
  }
}
