/**
 * The state file name of an owner. The plain form `<containerId>@<ifname>` is kept wherever it is safe, because an
 * operator reads these directories; otherwise the name is a readable prefix plus `~` and 16 hex digits of a 64-bit
 * FNV-1a hash of the exact owner:
 *  - a key with an upper-case letter: NTFS compares names case-insensitively, so `ABC@eth0` and `abc@eth0` would be
 *    one file on Windows (two pods sharing, and overwriting, one record). Only the hashed form tells them apart;
 *  - a key longer than PLAIN_MAX: the CNI spec does not bound container ids, and a file name is at most 255 bytes
 *    (the temp and quarantine names add about 40 more; Windows paths are also bounded), so DEL must never depend
 *    on a name the file system refuses.
 * `~` appears in neither a container id nor an ifname, so the two forms never meet. The owner itself is always in
 * the record; the name only has to be unique and stable.
 */
import * as path from 'path';
import { ownerKey, type Owner, type RecordKind } from './records';

/** Longest plain key, and the prefix kept in a hashed name (both leave room under 255 bytes and MAX_PATH). */
const PLAIN_MAX = 96;
const PREFIX_MAX = 64;

function fnv64(text: string): string {
  // FNV-1a 64 as two 32-bit halves (BigInt would cost more than the whole name): collisions need ~2^32 names.
  let h1 = 0x84222325;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 ^= c;
    // Multiply the 64-bit value by the FNV prime 0x100000001b3 (= 2^40 + 0x1b3), in 32-bit halves.
    const lo = Math.imul(h1 & 0xffff, 0x1b3) + (((h1 >>> 16) * 0x1b3) & 0xffff) * 0x10000;
    const carry = Math.floor(((h1 >>> 16) * 0x1b3 + Math.floor(((h1 & 0xffff) * 0x1b3) / 0x10000)) / 0x10000);
    const hi = (Math.imul(h2, 0x1b3) + carry + (h1 << 8)) >>> 0;
    h1 = lo >>> 0;
    h2 = hi;
  }
  return (h2 >>> 0).toString(16).padStart(8, '0') + (h1 >>> 0).toString(16).padStart(8, '0');
}

/** The file name (without `.json`) under which the owner's records live. */
export function fileKey(o: Owner): string {
  const key = ownerKey(o);
  if (key.length <= PLAIN_MAX && !/[A-Z]/.test(key)) return key;
  return `${key.slice(0, PREFIX_MAX).toLowerCase()}~${fnv64(key)}`;
}

/**
 * The owner a file name names, when the name says it (plain form only); undefined for a hashed name, whose owner
 * only its content knows. Callers that need to match a file to an owner compare fileKey(owner) instead.
 */
export function ownerFromFileKey(key: string): Owner | undefined {
  if (key.includes('~')) return undefined;
  const at = key.lastIndexOf('@');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { containerId: key.slice(0, at), ifname: key.slice(at + 1) };
}

// ---- the state directory's layout ----

/** The folder of each kind of record under the state directory. */
export const DIRS: Record<RecordKind, string> = {
  attachment: 'attachments',
  intent: 'intents',
  tombstone: 'tombstones',
};
/** Where unreadable records are moved (quarantine.ts). */
export const QUARANTINE = 'quarantine';
/** The stamp of the last whole-node audit (epoch ms): not a record, so no reader of records ever sees it. */
export const AUDITED = 'audited';
/** The adapter each network bound when the node agent first saw it (adapters-seen.ts): not a record either. */
export const ADAPTERS_SEEN = 'adapters-seen.json';
/** The marker in the temp name of a record set aside because it could not be deleted (RecordFiles.remove). */
export const SET_ASIDE = '.removed-';

/** The path of an owner's record file of a kind. */
export function recordPath(dir: string, kind: RecordKind, owner: Owner): string {
  return path.join(dir, DIRS[kind], `${fileKey(owner)}.json`);
}
