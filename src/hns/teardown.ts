/**
 * Tearing down HNS objects, one way for every verb that does it (DEL, the rollback of an ADD or a repair, the audit's
 * sweep, GC of a previous plugin's endpoints): an endpoint is detached from what it is attached to before it is
 * deleted, and HNS's "not found" counts as gone — where an IP hangs on the answer, only once a listing by id agrees.
 *
 * "Not found" is a claim, not a fact: HNS has answered 0x80070490 for an endpoint it still had, attached, and
 * releasing its IP then gives the next pod an address HNS refuses (0x803B002F). A listing is the second opinion; it
 * is asked only after a "not found", so a delete that HNS answers costs no extra round trip.
 */
import { sameId, type DeleteOutcome, type EndpointInfo, type HnsApi } from './api';
import { hasCode, isComputeSystemMissing, isNotFound, unlessRefused } from './hcn-error';
import { HR } from './hresults';

export type HnsObjectKind = 'endpoint' | 'network';

/** What an endpoint is attached to: its HCN namespace, the container its vNIC was hot-added to (HCS), or both. */
export interface AttachedTo {
  namespaceId?: string | undefined;
  containerId?: string | undefined;
}

export interface DetachOptions {
  /**
   * 'best-effort': a hot detach that fails (but for HNS being unreachable) is ignored, as the previous plugins do
   * (containernetworking/plugins pkg/hns/endpoint_windows.go RemoveHnsEndpoint: `_ = hcsshim.HotDetachEndpoint(...)`).
   */
  hotDetach?: 'best-effort';
}

/**
 * Detaches an endpoint: from its namespace, then from the container (the reference hot-detaches before deleting,
 * pkg/hns RemoveHnsEndpoint; skipped where HCS or HNSCall is missing, since nothing could have hot-attached it). A
 * missing endpoint, namespace, container or attachment counts as detached.
 */
export async function detachEndpoint(
  api: HnsApi,
  endpointId: string,
  from: AttachedTo,
  options: DetachOptions = {},
): Promise<void> {
  if (from.namespaceId) await detached(api.detachNamespace(endpointId, from.namespaceId));
  if (from.containerId && !api.hotAttachUnavailable()) {
    const hot = detached(api.hotDetach(endpointId, from.containerId));
    if (options.hotDetach === 'best-effort') await unlessRefused(hot, () => undefined);
    else await hot;
  }
}

async function detached(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (isNotFound(e) || hasCode(e, HR.ENDPOINT_NOT_ATTACHED) || isComputeSystemMissing(e)) return;
    throw e;
  }
}

/** Deletes an endpoint or a network; "not found", answered or thrown, is the outcome 'not-found', not a failure. */
export async function deleteObject(api: HnsApi, kind: HnsObjectKind, id: string): Promise<DeleteOutcome> {
  try {
    return kind === 'endpoint' ? await api.deleteEndpoint(id) : await api.deleteNetwork(id);
  } catch (e) {
    if (isNotFound(e)) return 'not-found';
    throw e;
  }
}

/**
 * Deletes, and takes HNS's "not found" for gone only once a listing by id confirms it: a listing that still shows
 * the object (or that fails) throws, so the caller keeps what hangs on it (an IP) and leaves the object to the audit.
 */
export async function deleteConfirmed(api: HnsApi, kind: HnsObjectKind, id: string): Promise<void> {
  if ((await deleteObject(api, kind, id)) === 'deleted') return;
  if (await stillListed(api, kind, id))
    throw new Error(`HNS answered "not found" for ${kind} ${id}, but still lists it`);
}

export interface RemoveOptions extends DetachOptions {
  /**
   * 'by-caller': the delete's "not found" is taken as it is; the caller confirms the absence of several endpoints
   * with one listing of its own (endpointsListed) before it releases anything.
   */
  confirm?: 'by-caller';
}

/** Detaches an endpoint from what it is attached to and deletes it, confirming a "not found" by a listing. */
export async function removeEndpoint(
  api: HnsApi,
  endpointId: string,
  from: AttachedTo,
  options: RemoveOptions = {},
): Promise<void> {
  await detachEndpoint(api, endpointId, from, options);
  if (options.confirm === 'by-caller') await deleteObject(api, 'endpoint', endpointId);
  else await deleteConfirmed(api, 'endpoint', endpointId);
}

/** Whether HNS still lists the object; a listing that fails cannot confirm its absence, so it counts as listed. */
async function stillListed(api: HnsApi, kind: HnsObjectKind, id: string): Promise<boolean> {
  const listing: Promise<Array<{ id: string }>> = kind === 'endpoint' ? api.listEndpoints() : api.listNetworks();
  return unlessRefused(
    listing.then((all) => all.some((o) => sameId(o.id, id))),
    () => true,
  );
}

/**
 * The endpoints HNS lists that match, for a caller that confirms several absences with one listing. A listing that
 * fails (other than HNS being unreachable, which the caller reports as 11) cannot confirm anything: it answers one
 * stand-in entry (id 'unknown') that says so, i.e. "still there".
 */
export async function endpointsListed(
  api: HnsApi,
  match: (e: EndpointInfo) => boolean,
): Promise<Array<Pick<EndpointInfo, 'id' | 'name'>>> {
  return unlessRefused(
    api.listEndpoints().then((all): Array<Pick<EndpointInfo, 'id' | 'name'>> => all.filter(match)),
    (e) => [{ id: 'unknown', name: `(the endpoint listing failed: ${(e as Error).message})` }],
  );
}
