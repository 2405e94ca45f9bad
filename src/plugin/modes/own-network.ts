/**
 * The pod's own network (delegated NIC) as a DEL removes it: deleted unless an endpoint is still on it
 * (orphans/network-holders.ts: HNS would take it along).
 */
import type { HnsApi } from '../../hns/api';
import type { Logger } from '../../log/logger';
import { deleteNetworkUnlessHeld, keptFor } from '../../orphans/network-holders';

/**
 * Deletes the pod's own network (delegated NIC) unless an endpoint is still on it (network-holders.ts: HNS would take
 * it along); returns whether it went. One left carries the owner's name with nothing claiming it once the record or
 * tombstone is gone: the audit keeps it while something is on it and deletes it once it is empty.
 */
export async function deleteOwnNetwork(api: HnsApi, networkId: string, log: Logger): Promise<boolean> {
  const kept = keptFor(await deleteNetworkUnlessHeld(api, networkId));
  if (!kept) return true;
  log.warn(
    { network: networkId, endpoints: kept.map((e) => e.name) },
    'DEL leaves the network: other endpoint(s) are on it; the audit deletes it once it is empty',
  );
  return false;
}
