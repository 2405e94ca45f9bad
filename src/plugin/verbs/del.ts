/**
 * DEL is best effort and idempotent, and it exits 0 unless HNS cannot be reached (then 11, so the runtime retries).
 * As a pipeline over a plan that no step changes (del-plan.ts):
 *
 *   prepare        the owner, the record or its absence, the mode (the record's, else the configuration's), the HNS
 *                  API: the configured one, else whichever the host has, else none                     del-plan.ts
 *   with a record  the mode removes what it names (detach → delete → confirm; the delegated NIC's own network after
 *                  it, unless another endpoint is on it: orphans/network-holders.ts), the IP is released, the record
 *                  dropped. If HNS refuses a delete, the record is replaced by a tombstone so the audit finishes the
 *                  job                                                                             del-recorded.ts
 *   without one    (the ADD never committed: killed, timed out, or never ran) tombstone the owner, which voids any
 *                  intent, then delete what HNS shows under the owner's names and the ids the intent planned. The
 *                  tombstone stays, so an object HNS completes after this DEL (seed 000) is an orphan to the next
 *                  audit                                                                         del-unrecorded.ts
 *   shared         a shared attachment (container:<id>) only drops its record: the endpoint is the sandbox's.
 *
 * When HNS refuses to delete an endpoint, its IP is still in use: the IPAM allocation is kept (the tombstone says
 * ipamPending) and released by the ADD or GC whose audit finally removes the endpoint — never handed out twice.
 * On a migrated node the pod may be another plugin's: its endpoint under that plugin's naming scheme is removed as that
 * plugin's DEL would (del-migrated.ts, peer-endpoints.ts), and no address is released while any HNS endpoint, ours or
 * foreign, still holds it (ip-holders.ts): the tombstone keeps it (ipamPending, heldBy) until the endpoint is gone.
 * A "not found" answer is a claim, not a fact (HNS has answered 0x80070490 for an endpoint it still had, attached):
 * before an address is released, the endpoint's absence is confirmed through a listing, by id.
 */
import type { VerbContext } from '../../cni/types';
import type { AttachmentRecord } from '../../state/records';
import type { DelRun, DelVerbDeps } from '../del-steps';
import { step } from '../to-cni-error';
import { prepare, requireApi } from './del-plan';
import { delRecorded } from './del-recorded';
import { delUnrecorded } from './del-unrecorded';

export type { DelVerbDeps } from '../del-steps';

export async function del(ctx: VerbContext, deps: DelVerbDeps): Promise<void> {
  const run = await prepare(ctx, deps);
  const { record } = run.plan;
  if (record?.mode === 'shared') return dropShared(run, record);
  if (!record) return delUnrecorded(run);
  return delRecorded({ ...run, api: requireApi(run.api), plan: { ...run.plan, record } });
}

/** `container:<sandbox>`: only the record goes; the endpoint is the sandbox's, and stays. */
async function dropShared(run: DelRun, rec: AttachmentRecord): Promise<void> {
  await step('removing the shared attachment record', () => run.store.removeAttachment(run.plan.owner));
  run.log.info({ sandbox: rec.sharedWith?.containerId }, 'shared attachment removed; the sandbox endpoint stays');
}
