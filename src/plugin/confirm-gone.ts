/**
 * Confirming that HNS no longer has an endpoint before its IP is released. HNS's "not found" answer to a detach or
 * a delete is a claim, not a fact: it has been seen for an endpoint that was still there and attached, and
 * releasing its IP then gives the next pod an address HNS refuses (0x803B002F). A listing is the second opinion.
 */
import type { EndpointInfo, HnsApi } from '../hns/api';
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
