/**
 * Confirming that HNS no longer has an endpoint before its IP is released. HNS's "not found" answer to a detach or
 * a delete is a claim, not a fact: it has been seen for an endpoint that was still there and attached, and
 * releasing its IP then gives the next pod an address HNS refuses (0x803B002F). A listing is the second opinion.
 */
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { isUnreachable } from '../hns/hcn-error';

/**
 * The endpoints HNS lists that match. A listing that fails (other than HNS being unreachable, which the caller
 * reports as 11) cannot confirm anything, so it counts as "still there": the IP is kept, the audit finishes later.
 */
export async function endpointsListed(
  api: HnsApi,
  match: (e: EndpointInfo) => boolean,
): Promise<Array<Pick<EndpointInfo, 'id' | 'name'>>> {
  try {
    return (await api.listEndpoints()).filter(match);
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return [{ id: 'unknown', name: `(the endpoint listing failed: ${(e as Error).message})` }];
  }
}

/**
 * Deletes an endpoint and takes HNS's "not found" for gone only once a listing by id confirms it; a listing that
 * still shows it throws (the caller keeps the IP and hands the endpoint to the audit).
 */
export async function deleteEndpointConfirmed(api: HnsApi, id: string): Promise<void> {
  if ((await api.deleteEndpoint(id)) === 'not-found') {
    const listed = await endpointsListed(api, (e) => sameId(e.id, id));
    if (listed.length > 0) throw new Error(`HNS answered "not found" for endpoint ${id}, but still lists it`);
  }
}
