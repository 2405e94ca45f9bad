/**
 * IPAM allocations DEL had to keep: HNS refused to delete the endpoint, so its IP was still in use (tombstone
 * ipamPending). Once an audit has removed everything of that owner from HNS, the ADD or GC that ran it releases the
 * allocation — on behalf of the owner, through this network's IPAM — and clears the flag.
 *
 * Only tombstones written before the audit's HNS listing began count: the listing is what says the owner's endpoint
 * is gone, and a tombstone written since may name an endpoint the listing could not have seen. (They are the ones
 * the audit read, so the state is not read a second time on every ADD.)
 */
import type { IpamClient } from '../cni/types';
import type { Logger } from '../log/logger';
import type { AuditReport } from '../orphans/audit';
import { ownerKey } from '../state/records';
import type { StateStore } from '../state/store';

export async function releasePendingIpam(
  store: StateStore,
  ipam: IpamClient,
  cniNetwork: string,
  report: Pick<AuditReport, 'remainingOwners' | 'tombstones' | 'listedAt'>,
  log: Logger,
): Promise<string[]> {
  const errors: string[] = [];
  if (!ipam.configured) return errors;
  for (const t of report.tombstones) {
    if (!t.ipamPending || t.createdAt >= report.listedAt || report.remainingOwners.has(ownerKey(t))) continue;
    if (t.cniNetwork !== undefined && t.cniNetwork !== cniNetwork) continue;
    try {
      await ipam.delFor(t);
      await store.ipamReleased(t);
      log.info({ owner: ownerKey(t) }, 'released the IP its DEL had to keep (its endpoint is gone now)');
    } catch (e) {
      errors.push(`releasing the IP of ${ownerKey(t)}: ${(e as Error).message}`);
      log.warn({ owner: ownerKey(t), err: (e as Error).message }, 'could not release a kept IP yet; will retry');
    }
  }
  return errors;
}
