/**
 * The claim lifecycle, shared by ADD and repair: an intent is written before anything is created in HNS, follows the
 * ids HNS really gave, and is replaced by the attachment record at the commit.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { NetConf } from '../cni/types';
import { sameId } from '../hns/api';
import type { Logger } from '../log/logger';
import { newGuid } from '../net/guid';
import type { AttachmentRecord, IntentRecord, Owner, PlannedObject } from '../state/records';
import type { PreparedRecord, StateStore } from '../state/store';
import type { HostHns } from './host-hns';
import type { Undo } from './undo';

/**
 * What claiming and committing need (an ADD's run: add-steps.ts AddRun; a repair: src/plugin/verbs/repair.ts; the
 * self-test): whose claim on which network, and the clock, process and OS its intent records.
 */
export interface ClaimContext {
  readonly plan: { readonly conf: NetConf; readonly owner: Owner };
  readonly deps: { readonly now: () => number; readonly pid: number; readonly hns: Pick<HostHns, 'os'> };
  readonly log: Logger;
  readonly store: StateStore;
  readonly undo: Undo;
}

/**
 * The intent is written under the state lock before any HNS create. Its deadline bounds how long it protects what
 * it planned even if its process hangs: every HNS call is bounded by hnsTimeoutSeconds and an ADD makes a handful.
 */
export async function writeIntent(
  a: ClaimContext,
  planned: PlannedObject[],
  mac?: string,
  requireAttachment?: AttachmentRecord,
): Promise<IntentRecord> {
  const now = a.deps.now();
  const intent: IntentRecord = {
    kind: 'intent',
    schema: 1,
    id: newGuid(),
    containerId: a.plan.owner.containerId,
    ifname: a.plan.owner.ifname,
    cniNetwork: a.plan.conf.name,
    planned,
    pid: a.deps.pid,
    pidStartTime: a.deps.hns.os().processStartTime(a.deps.pid),
    createdAt: now,
    deadline: now + 8 * a.plan.conf.hnsTimeoutSeconds * 1000 + 2 * a.plan.conf.ipamTimeoutSeconds * 1000 + 60_000,
    ...(mac ? { mac } : {}),
  };
  await a.store.writeIntent(intent, requireAttachment ? { requireAttachment } : {});
  a.undo.push('drop the intent', () => a.store.removeIntent(a.plan.owner, intent.id));
  return intent;
}

/** Adds what became known after the intent was written (the NIC and its network, once IPAM named the MAC). */
export async function updateIntent(
  a: Pick<ClaimContext, 'store'>,
  intent: IntentRecord,
  planned: PlannedObject[],
  mac?: string,
): Promise<IntentRecord> {
  const next: IntentRecord = { ...intent, planned, ...(mac ? { mac } : {}) };
  const outcome = await a.store.updateIntent(next);
  if (outcome !== 'committed') throw gone(outcome);
  return next;
}

/** An object HNS created: the id the intent planned for it (if any), and the id HNS gave it. */
export interface CreatedId {
  readonly kind: 'network' | 'endpoint';
  readonly planned: string | undefined;
  readonly actual: string;
}

/**
 * The intent claims planned objects by the id it chose. Should HNS have assigned another id, the claim follows the
 * real one at once — else an audit could judge the new object unclaimed while this ADD is still working on it.
 */
export async function keepClaim(
  a: Pick<ClaimContext, 'store' | 'log'>,
  intent: IntentRecord,
  created: CreatedId,
): Promise<IntentRecord> {
  const { kind, planned, actual } = created;
  if (!planned || sameId(planned, actual)) return intent;
  a.log.warn(
    { kind, planned, actual },
    'HNS did not keep the id chosen for the object; the intent now claims the id HNS gave it',
  );
  return updateIntent(
    a,
    intent,
    intent.planned.map((p) => (p.kind === kind && p.id && sameId(p.id, planned) ? { ...p, id: actual } : p)),
    intent.mac,
  );
}

/** Replaces the intent by the record; fails (and the caller rolls back) when a DEL voided the intent meanwhile. */
export async function commit(
  a: Pick<ClaimContext, 'store' | 'undo'>,
  record: AttachmentRecord,
  intent: IntentRecord,
  prepared?: PreparedRecord,
): Promise<void> {
  const outcome = await a.store.commitAttachment(record, intent.id, prepared);
  if (outcome === 'expired') {
    throw new CniError(CniCode.TRY_AGAIN_LATER, 'ADD ran past its deadline; rolled back so the audit does not race it');
  }
  if (outcome !== 'committed') throw gone(outcome);
  a.undo.clear();
}

/** The message says what really happened to this attempt's claim (it used to blame a DEL for everything). */
function gone(outcome: 'superseded' | 'deleted' | 'expired'): CniError {
  if (outcome === 'expired')
    return new CniError(
      CniCode.TRY_AGAIN_LATER,
      'ADD ran past its deadline; rolled back so the audit does not race it',
    );
  return outcome === 'deleted'
    ? new CniError(CniCode.TRY_AGAIN_LATER, 'the attachment was deleted (DEL) while this ADD ran; rolled back')
    : new CniError(
        CniCode.TRY_AGAIN_LATER,
        'another ADD of this attachment took over while this one ran (its claim had expired); rolled back',
      );
}
