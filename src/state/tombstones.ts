/**
 * Tombstones: what a DEL leaves behind when it could not be sure it deleted everything — the objects an intent
 * planned (so a later audit finishes deleting what HNS completes after the DEL), the intents it voided (so their
 * commits fail), and an IPAM release it still owes (ipamPending, with the addresses others held: heldBy). Written
 * fully durable (record-files.ts WRITE_DURABILITY): a tombstone may be the only memory of an owed release.
 */
import { randomUUID } from 'crypto';
import type { RecordFiles } from './record-files';
import {
  ownerKey,
  type HeldBy,
  type IntentRecord,
  type Owner,
  type PlannedObject,
  type TombstoneRecord,
  tombstoneWrite,
} from './records';

export interface TombstoneOptions {
  extra?: PlannedObject[];
  onlyIntent?: string;
  cniNetwork?: string;
  ipamPending?: boolean;
  heldBy?: readonly HeldBy[];
}

/**
 * Writes a tombstone for the owner and drops its intent, returning the intent it voided. The tombstone keeps what
 * that intent planned, so a later audit can finish deleting objects HNS completes after this DEL, and names the
 * intents it voided. `onlyIntent`: void the intent only if it is still this one (GC acting on a snapshot must not
 * void a newer, running ADD's).
 */
export async function writeTombstone(
  f: RecordFiles,
  owner: Owner,
  reason: string,
  options: TombstoneOptions,
): Promise<IntentRecord | undefined> {
  f.ensure();
  return f.lock.run(() => {
    const current = f.read('intent', owner);
    const intent =
      current && (options.onlyIntent === undefined || current.id === options.onlyIntent) ? current : undefined;
    const prior = f.read('tombstone', owner);
    const planned = dedupe([...(prior?.planned ?? []), ...(intent?.planned ?? []), ...(options.extra ?? [])]);
    const voids = [...new Set([...(prior?.voids ?? []), ...(intent ? [intent.id] : [])])];
    const cniNetwork = options.cniNetwork ?? intent?.cniNetwork ?? prior?.cniNetwork;
    const heldBy = [...(prior?.heldBy ?? [])];
    for (const h of options.heldBy ?? [])
      if (!heldBy.some((x) => x.id === h.id && x.address === h.address)) heldBy.push({ ...h });
    const tomb: TombstoneRecord = {
      kind: 'tombstone',
      schema: 1,
      containerId: owner.containerId,
      ifname: owner.ifname,
      createdAt: f.now(),
      writeId: randomUUID(),
      reason,
      planned,
      ...(voids.length ? { voids } : {}),
      ...(cniNetwork ? { cniNetwork } : {}),
      ...(options.ipamPending || prior?.ipamPending ? { ipamPending: true } : {}),
      ...(heldBy.length ? { heldBy } : {}),
    };
    f.write(tomb, 'tombstone');
    if (intent) removeVoidedIntent(f, owner, intent.id);
    return intent;
  });
}

/**
 * The intent a tombstone just written voids (by id): removing it only tidies (removeTombstone keeps the tombstone
 * while it is there), and its node-wide claim is withdrawn. Under the caller's lock.
 */
export function removeVoidedIntent(f: RecordFiles, owner: Owner, intentId: string): void {
  f.chore(`removing the intent of ${ownerKey(owner)} its DEL voided`, f.path('intent', owner), () =>
    f.remove('intent', owner, 'intent'),
  );
  f.registry?.withdraw(owner, intentId, f.log);
}

/** The IPAM allocation a tombstone kept (ipamPending) has been released. */
export async function ipamReleased(f: RecordFiles, owner: Owner): Promise<void> {
  f.ensure();
  await f.lock.run(() => {
    const t = f.read('tombstone', owner);
    if (!t?.ipamPending) return;
    const { ipamPending: _released, heldBy: _holders, ...rest } = t;
    f.write({ ...rest, writeId: randomUUID() }, 'tombstone');
  });
}

/**
 * Removes the owner's tombstone unless it still holds back an IPAM release, or it is not the write `expected` (when
 * given: a tombstone written since, by identity — tombstoneWrite — never by comparing clocks). An intent the
 * tombstone voids that is still on disk (its removal failed) goes first: without the tombstone it would count again.
 */
export async function removeTombstone(f: RecordFiles, owner: Owner, expected?: TombstoneRecord): Promise<boolean> {
  f.ensure();
  return f.lock.run(() => {
    const t = f.read('tombstone', owner);
    if (!t || t.ipamPending || (expected !== undefined && tombstoneWrite(t) !== tombstoneWrite(expected))) return false;
    const intent = f.read('intent', owner);
    if (intent && t.voids?.includes(intent.id)) f.remove('intent', owner, 'intent');
    return f.remove('tombstone', owner, 'tombstone');
  });
}

/** Why an attempt's intent is no longer current: a DEL voided it (its tombstone says), or another attempt replaced it. */
export function whyGone(f: RecordFiles, owner: Owner & { id: string }): 'deleted' | 'superseded' {
  return f.read('tombstone', owner)?.voids?.includes(owner.id) ? 'deleted' : 'superseded';
}

/** The planned objects, each once (by kind, name and id). */
export function dedupe(list: PlannedObject[]): PlannedObject[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.kind}|${p.name}|${p.id ?? ''}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
