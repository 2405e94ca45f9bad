/**
 * When a network of ours may be deleted: only while every endpoint on it is being deleted with it. Deleting a network
 * takes the endpoints still on it along (hcn-sim's default, its `deleteNetworkWithEndpoints: cascade`; how real HNS
 * answers is not in the public sources, which delete endpoints before their network, e.g. microsoft/hcsshim
 * hcn/hcnendpoint_test.go, and name HCN_E_ENTITY_HAS_REFERENCES for a refusal), so a network holding an endpoint
 * nobody condemned — another plugin's, an operator's, a pod of ours the caller does not hold — stays.
 *
 * One rule for every delete of a network of ours: the audit judges with it (detect.ts: a network holding endpoints
 * that are not orphans is protected), and the DEL, GC and uninstall (by record), the repair's and an ADD's undo, and
 * the audit's own sweep ask it just before deleting (deleteNetworkUnlessHeld). A network left that way carries the
 * owner's name and nothing claims it once its record is gone: the audit keeps it while something is on it and deletes
 * it once it is empty.
 */
import { sameId, type DeleteOutcome, type EndpointInfo, type HnsApi } from '../hns/api';
import { unlessRefused } from '../hns/hcn-error';
import { deleteConfirmed, deleteObject } from '../hns/teardown';

type OnNetwork = Pick<EndpointInfo, 'id' | 'name' | 'networkId'>;

/** The endpoints on the network that keep it: every one `goesWithIt` (condemned with the network) does not name. */
export function endpointsKeeping<E extends OnNetwork>(
  networkId: string,
  endpoints: readonly E[],
  goesWithIt: (e: E) => boolean = () => false,
): E[] {
  return endpoints.filter((e) => sameId(e.networkId, networkId) && !goesWithIt(e));
}

export type NetworkDeleteOutcome = DeleteOutcome | { kept: Array<Pick<EndpointInfo, 'id' | 'name'>> };

/**
 * Deletes a network of ours unless an endpoint is on it now (the caller has deleted the ones it deletes), asking HNS
 * for that network's endpoints first. A query that fails (HNS reachable) cannot say the network is empty: it keeps it.
 * `confirm`: HNS's "not found" counts only once a listing agrees (deleteConfirmed), else it is the outcome.
 */
export async function deleteNetworkUnlessHeld(
  api: HnsApi,
  networkId: string,
  options: { confirm?: boolean } = {},
): Promise<NetworkDeleteOutcome> {
  const on = await unlessRefused(api.findEndpoints({ networkId }), (e) => [
    { id: 'unknown', name: `(the endpoint query failed: ${(e as Error).message})`, networkId },
  ]);
  const keep = endpointsKeeping(networkId, on);
  if (keep.length > 0) return { kept: keep.map((e) => ({ id: e.id, name: e.name })) };
  if (!options.confirm) return deleteObject(api, 'network', networkId);
  await deleteConfirmed(api, 'network', networkId);
  return 'deleted';
}

/** Whether the outcome is a network kept for the endpoints on it. */
export function keptFor(outcome: NetworkDeleteOutcome): Array<Pick<EndpointInfo, 'id' | 'name'>> | undefined {
  return typeof outcome === 'object' ? outcome.kept : undefined;
}
