/**
 * Names that say an HNS object is ours and which attachment owns it, so a leak is recognisable from HNS alone, even
 * with the state lost, and kept short, as the reference plugins' names are (~20 characters):
 *
 *   endpoint:                    hcn-ep-<owner tag><check>
 *   delegated-NIC network:       hcn-nic-<owner tag><check>
 *
 * <owner tag> is 12 hex digits (48 bits) of FNV-1a hashes of the container id and ifname; <check> is 4 hex digits
 * over the kind and the tag. (The NIC's MAC, once part of network names, is on the network's adapter and in the
 * attachment's intent and record.) The tag names the owner without spelling out a 64-character
 * container id: whoever has the owner (a record, an intent, a tombstone, a DEL) can recompute it, and an object whose
 * owner no state knows is still recognisably ours (the audit judges it without one). The check keeps a name that
 * merely looks like ours (a typo, another tool's naming) foreign: we never delete what we cannot prove is ours. It is
 * a check against accidents, not an authentication (a keyed hash would need a secret on every node); FNV instead of
 * SHA-256 because loading node:crypto costs every plugin start several milliseconds.
 * Only [a-z0-9-] appear, which HNS, vSwitch and interface names all accept.
 *
 * Names of earlier versions (hcn-cni_ep_<containerId>_<ifname>_<h>, hcn-cni_nic_<containerId>_<ifname>_<MAC>_<h>)
 * are still recognised, so their leaks are still found after an upgrade.
 */
import type { Owner } from '../state/records';

export type OwnedKind = 'endpoint' | 'network';

export interface OwnedName {
  kind: OwnedKind;
  /** ownerTag() of the owner. */
  tag: string;
  /** Names of earlier versions spell the owner out. */
  owner?: Owner;
  /** Earlier delegated-NIC network names: the NIC MAC, "AA-BB-CC-DD-EE-FF". */
  mac?: string;
}

function fnv(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const hex = (n: number, digits: number) =>
  n
    .toString(16)
    .padStart(8, '0')
    .slice(8 - digits);

/** 12 hex digits naming the owner (two FNV-1a passes with different offsets: 48 bits, no collisions in practice). */
export function ownerTag(owner: Owner): string {
  const text = `${owner.containerId}\0${owner.ifname}`;
  return hex(fnv(text), 8) + hex(fnv(text, 0x050c5d1f), 4);
}

function check(kind: OwnedKind, tag: string): string {
  return hex(fnv(`hcn-cni\0${kind}\0${tag}`), 4);
}

export function endpointName(owner: Owner): string {
  const tag = ownerTag(owner);
  return `hcn-ep-${tag}${check('endpoint', tag)}`;
}

export function nicNetworkName(owner: Owner): string {
  const tag = ownerTag(owner);
  return `hcn-nic-${tag}${check('network', tag)}`;
}

/** What a name of ours says, or undefined for any other name (including a forged one). */
export function parseOwnedName(name: string): OwnedName | undefined {
  const m = /^hcn-(ep|nic)-([0-9a-f]{12})([0-9a-f]{4})$/.exec(name);
  if (m) {
    const kind: OwnedKind = m[1] === 'ep' ? 'endpoint' : 'network';
    return check(kind, m[2]!) === m[3] ? { kind, tag: m[2]! } : undefined;
  }
  return parseLegacyName(name);
}

function legacyHash(kind: OwnedKind, owner: Owner, mac: string): string {
  return hex(fnv(`hcn-cni\0${kind}\0${owner.containerId}\0${owner.ifname}\0${mac}`), 8);
}

function parseLegacyName(name: string): OwnedName | undefined {
  const m = /^hcn-cni_(ep|nic)_(.+)_([0-9a-f]{8})$/.exec(name);
  if (!m) return undefined;
  const kind: OwnedKind = m[1] === 'ep' ? 'endpoint' : 'network';
  let body = m[2]!;
  let mac = '';
  if (kind === 'network') {
    const mm = /^(.+)_([0-9A-F]{12})$/.exec(body);
    if (!mm) return undefined;
    body = mm[1]!;
    mac = mm[2]!;
  }
  // Try every '_' as the container id / ifname split; the hash accepts exactly one.
  for (let i = body.indexOf('_'); i > 0; i = body.indexOf('_', i + 1)) {
    const owner = { containerId: body.slice(0, i), ifname: body.slice(i + 1) };
    if (owner.ifname && legacyHash(kind, owner, mac) === m[3]) {
      const tag = ownerTag(owner);
      return mac ? { kind, tag, owner, mac: mac.match(/../g)!.join('-') } : { kind, tag, owner };
    }
  }
  return undefined;
}

/** Owners by tag, from whatever the caller knows (records, intents, tombstones). */
export function ownersByTag(owners: Iterable<Owner>): Map<string, Owner> {
  const out = new Map<string, Owner>();
  for (const o of owners) out.set(ownerTag(o), { containerId: o.containerId, ifname: o.ifname });
  return out;
}
