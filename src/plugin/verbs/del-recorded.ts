/**
 * DEL with a record: the mode removes what the record names (detach, delete the endpoint confirmed, then the pod's own
 * network in delegated-NIC mode unless another endpoint is on it: orphans/network-holders.ts), the IP is released once
 * no endpoint holds it, and the record is dropped. If HNS refuses a delete, the record is replaced by a tombstone so
 * the audit finishes the job, and the IP stays allocated (ipamPending) while the endpoint lives.
 */
import { CniError } from '../../cni/cni-error';
import { isUnreachable } from '../../hns/hcn-error';
import { deleteConfirmed } from '../../hns/teardown';
import type { AttachmentRecord, PlannedObject } from '../../state/records';
import { detach } from '../attach';
import type { DelDeps, DelRunWithApi } from '../del-steps';
import { addressesOf, heldAddresses, keepForHolders } from '../ip-holders';
import { modeOfRecord } from '../modes/choose';
import { toCniError } from '../to-cni-error';

/** A DEL of a committed attachment, through an HNS API. */
type RecordedDel = DelRunWithApi & { readonly plan: { readonly record: AttachmentRecord } };

/** DEL with a record: delete what it names, release the IP once no endpoint holds it, drop the record. */
export async function delRecorded(run: RecordedDel): Promise<void> {
  const rec = run.plan.record;
  const outcome = await deleteByRecord(run, rec);
  if (outcome.endpointGone && rec.endpoint.owned) run.addressBook?.deleted(rec.endpoint.id);
  const released = await releaseRecorded(run, outcome.endpointGone);
  try {
    await deleteRepaired(run, outcome);
  } catch (e) {
    // The HNS objects and the IP are dealt with; the runtime (and the operator) must learn that, not only the error.
    const done = outcome.endpointGone
      ? `deleted endpoint ${rec.endpoint.id}${released ? ' and released its IP' : ''}`
      : `could not delete endpoint ${rec.endpoint.id} (tombstoned, its IP kept)`;
    const err = toCniError(e, 'removing the attachment record');
    throw new CniError(err.code, `DEL ${done}, but ${err.message}`, err.details, { cause: e });
  }
}

/** Releases the recorded IPAM allocation when the endpoint is gone; returns whether it did. */
async function releaseRecorded(run: RecordedDel, endpointGone: boolean): Promise<boolean> {
  const { record: rec, owner, conf } = run.plan;
  // Rule 1 (ip-holders.ts): not while another endpoint (a migrated node's previous plugin's) holds the address —
  // as this process knows the holders from a listing young enough (address-book.ts), else as HNS lists them.
  const releasable = endpointGone && rec.ipamAllocated && run.ipam.configured;
  const holders = releasable ? await heldAddresses(run.api, addressesOf(rec.result), run.addressBook?.for(conf)) : [];
  if (holders.length > 0) await keepForHolders(run, owner, holders, conf.name);
  const released = releasable && holders.length === 0;
  if (released) await run.ipam.del();
  return released;
}

/**
 * Drops the record; a repair (repair.ts) that re-created the objects meanwhile left a record naming them: deleted
 * too, and `outcome` says whether the last endpoint deleted is gone.
 */
async function deleteRepaired(run: RecordedDel, outcome: { endpointGone: boolean }): Promise<void> {
  const { store, log } = run;
  let deleted = run.plan.record;
  for (let again = await store.removeDeletedAttachment(deleted); again;) {
    log.warn({ endpoint: again.endpoint.id }, 'DEL: a repair re-created the attachment meanwhile; deleting that too');
    outcome.endpointGone = (await deleteByRecord(run, again)).endpointGone;
    deleted = again;
    again = await store.removeDeletedAttachment(deleted);
  }
}

/**
 * Deletes the objects a record names, in the record's mode (modes/choose.ts: the delegated NIC's own network goes
 * after the endpoint). Unreachable HNS → 11 with the record kept for the retry. HNS refusing → a tombstone, and the
 * audit finishes it. `endpointGone` says whether the endpoint (the holder of the IP) is gone, i.e. whether the IPAM
 * allocation may be released now; if not, the tombstone keeps it (ipamPending).
 */
export async function deleteByRecord(d: DelDeps, rec: AttachmentRecord): Promise<{ endpointGone: boolean }> {
  const { api, store, log } = d;
  let endpointGone = !rec.endpoint.owned;
  try {
    await detach(api, rec.endpoint.id, rec.attach);
    if (rec.endpoint.owned) await deleteConfirmed(api, 'endpoint', rec.endpoint.id);
    endpointGone = true;
    const networkGone = await modeOfRecord(rec).removeOwnNetwork(d, rec);
    log.info({ endpoint: rec.endpoint.id, network: networkGone ? rec.network.id : undefined }, 'attachment deleted');
    return { endpointGone };
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'deleting the attachment');
    // HNS refused (e.g. 0x803B002C): hand it to the audit rather than fail the runtime's DEL forever.
    log.error(
      { err: (e as Error).message, endpointGone },
      'HNS refused a delete; tombstoning the attachment for the audit',
    );
    const extra: PlannedObject[] = [{ kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id }];
    if (rec.network.owned) extra.push({ kind: 'network', name: rec.network.name, id: rec.network.id });
    await store.tombstone(rec, `DEL could not delete: ${(e as Error).message}`, {
      extra,
      ipamPending: rec.ipamAllocated && !endpointGone,
      ...(rec.cniNetwork ? { cniNetwork: rec.cniNetwork } : {}),
    });
    return { endpointGone };
  }
}
