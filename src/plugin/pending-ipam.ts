/**
 * IPAM allocations DEL had to keep: HNS refused to delete the endpoint, so its IP was still in use (tombstone
 * ipamPending). Once an audit has removed everything of that owner from HNS, the ADD or GC that ran it releases the
 * allocation — on behalf of the owner, through this network's IPAM — and clears the flag.
 *
 * Only tombstones written before the audit's HNS listing began count: the listing is what says the owner's endpoint
 * is gone, and a tombstone written since may name an endpoint the listing could not have seen. Which those are is
 * known by identity (the audit read the tombstones before listing: writtenBeforeListing), never by comparing a
 * tombstone's wall-clock time with the listing's — a clock stepping back made a tombstone written after the listing
 * look older than it, and its address was released while its endpoint still held it. An owner the state still
 * claims (a committed record: a tombstone its commit could not remove; an intent: an ADD under way) keeps its
 * allocation too: releasing by owner would free the address that pod holds. A tombstone that names the endpoints that held
 * its address (heldBy: another plugin's, on a migrated node) waits until that listing shows none of them, and no
 * endpoint with the address.
 */
import type { IpamClient } from '../cni/types';
import { sameId } from '../hns/api';
import type { Logger } from '../log/logger';
import type { AuditReport } from '../orphans/audit';
import { ownerKey, tombstoneWrite } from '../state/records';
import type { StateStore } from '../state/store';
import { holdersOf } from './ip-holders';

export async function releasePendingIpam(
  store: StateStore,
  through: { ipam: IpamClient; network: string; log: Logger },
  report: Pick<AuditReport, 'remainingOwners' | 'tombstones' | 'writtenBeforeListing' | 'claimed'> &
    Partial<Pick<AuditReport, 'endpoints'>>,
): Promise<string[]> {
  const { ipam, network: cniNetwork, log } = through;
  const errors: string[] = [];
  if (!ipam.configured) return errors;
  for (const t of report.tombstones) {
    if (!t.ipamPending || !report.writtenBeforeListing.has(tombstoneWrite(t))) continue;
    if (report.remainingOwners.has(ownerKey(t)) || report.claimed.has(ownerKey(t))) continue;
    if (t.cniNetwork !== undefined && t.cniNetwork !== cniNetwork) continue;
    // Another plugin's endpoint held the address at DEL (a migrated node): kept while it, or any endpoint with that
    // address, is still listed (ip-holders.ts). Without the listing, nothing can be said: kept.
    if (t.heldBy?.length) {
      if (!report.endpoints) continue;
      const still = report.endpoints.filter((e) =>
        t.heldBy!.some((h) => sameId(h.id, e.id) || holdersOf([e], [h.address]).length > 0),
      );
      if (still.length > 0) continue;
    }
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
