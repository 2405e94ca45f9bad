/**
 * What the state claims, as the audit and the verbs judge HNS objects by it: every record of a state directory (or
 * one owner's), the quarantined files that still protect their owners, and the live claims of other state
 * directories on this node (the node-wide register, claims.ts).
 */
import type { Claim, NewerClaim } from './claims';
import { fileKey, ownerFromFileKey } from './file-names';
import type { QuarantinedFile } from './quarantine';
import type { RecordFiles } from './record-files';
import type { AttachmentRecord, IntentRecord, Owner, TombstoneRecord } from './records';

export interface StateSnapshot {
  attachments: AttachmentRecord[];
  intents: IntentRecord[];
  tombstones: TombstoneRecord[];
  quarantined: QuarantinedFile[];
  /** Live claims of other state directories on this node (the node-wide register), when there is one. */
  otherClaims?: Claim[];
  /** Their claims past the deadline whose process still runs (claims.ts): an audit voids them before a delete. */
  expiredClaims?: Claim[];
}

/** Everything on disk (unreadable files are quarantined on the way), and other state directories' claims. */
export function snapshot(f: RecordFiles): StateSnapshot {
  f.ensure();
  const attachments = f.readAll('attachment');
  const intents = f.readAll('intent');
  const tombstones = f.readAll('tombstone');
  return { attachments, intents, tombstones, ...quarantinedAndClaims(f) };
}

/**
 * What the state says of one owner, as a snapshot detect() can judge that owner's objects by: its record, intent
 * (unless it is `exceptIntent`: an ADD's own, which has created nothing yet) and tombstone, its quarantined files,
 * and other state directories' claims on it.
 */
export function ownerSnapshot(f: RecordFiles, owner: Owner, exceptIntent?: string): StateSnapshot {
  const record = f.read('attachment', owner);
  const intent = f.read('intent', owner);
  const tomb = f.read('tombstone', owner);
  const key = fileKey(owner);
  return {
    attachments: record ? [record] : [],
    intents: intent && intent.id !== exceptIntent ? [intent] : [],
    tombstones: tomb ? [tomb] : [],
    // Read after the reads above, which quarantine a record that has become unreadable: its owner may be live.
    ...quarantinedAndClaims(f, owner, key),
  };
}

/** The quarantined files of the state directory. */
export function quarantined(f: RecordFiles): QuarantinedFile[] {
  f.ensure();
  return f.quarantine.list();
}

/**
 * The quarantined files (all, or those under an owner's file key) and the claims of other state directories on
 * this node (all, or an owner's): the live ones, and (`expiredClaims`) those past their deadline whose process still
 * runs; a newer version's claim is among the quarantined, as `newer`: it protects its owner.
 */
function quarantinedAndClaims(
  f: RecordFiles,
  owner?: Owner,
  key?: string,
): { quarantined: QuarantinedFile[]; otherClaims?: Claim[]; expiredClaims?: Claim[] } {
  const found = quarantined(f).filter((q) => key === undefined || q.key === key);
  if (!f.registry) return { quarantined: found };
  const newer: NewerClaim[] = [];
  const others = f.registry.otherClaims(f.dir, f.now(), f.os.processStartTime, f.log, owner, newer);
  for (const n of newer) {
    found.push({ ...n, kind: 'intent', owner: ownerFromFileKey(n.key), at: f.now(), newer: true });
  }
  return { quarantined: found, otherClaims: others.live, ...(owner ? {} : { expiredClaims: others.expired }) };
}

/** Live claims of other state directories on this node (all, or an owner's). */
export function otherClaims(f: RecordFiles, owner?: Owner): Claim[] {
  return f.registry?.otherClaims(f.dir, f.now(), f.os.processStartTime, f.log, owner).live ?? [];
}
