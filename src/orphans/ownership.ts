/**
 * Names that say an HNS object is ours and which attachment owns it, so a leak is recognisable from HNS alone, even
 * with the state lost:
 *
 *   endpoint:                    hcn-ep-<owner tag><check>      (47 characters)
 *   delegated-NIC network:       hcn-nic-<owner tag><check>     (48 characters)
 *
 * <owner tag> is 32 hex digits (128 bits) of SHA-256 over the container id and ifname; <check> is 8 hex digits of
 * SHA-256 over the kind and the tag. Two owners with one tag would share HNS names, and a DEL of one would find the
 * other's objects: with a cryptographic 128-bit tag, finding such a pair takes about 2^64 hashes (the birthday
 * bound), where the 48-bit FNV tag of the previous version took about a minute. HNS takes longer names than these:
 * the reference plugins name endpoints `<containerID>_<network>`, 70 characters and more
 * (containernetworking/plugins pkg/hns/endpoint_windows.go ConstructEndpointName). The tag names the owner without
 * spelling out a 64-character container id: whoever has the owner (a record, an intent, a tombstone, a DEL) can
 * recompute it, and an object whose owner no state knows is still recognisably ours (the audit judges it without
 * one). The check keeps a name that merely looks like ours (a typo, another tool's naming) foreign: we never delete
 * what we cannot prove is ours. It is a check against accidents, not an authentication (a keyed hash would need a
 * secret on every node). Only [a-z0-9-] appear, which HNS, vSwitch and interface names all accept.
 *
 * Names of earlier versions are still recognised, so their leaks are still found after an upgrade:
 *  - hcn-ep-<12 hex FNV-1a tag><4 hex check>, hcn-nic-…: a 48-bit tag, which two owners can be made to share.
 *    `weakTag` marks them: a DEL, GC or audit never trusts such a name alone (see sparing in
 *    plugin/verbs/del-sparing.ts and the id checks in detect.ts).
 *  - hcn-cni_ep_<containerId>_<ifname>_<h>, hcn-cni_nic_<containerId>_<ifname>_<MAC>_<h>: they spell the owner out.
 */
import type { Owner } from '../state/records';
import { sha256Hex } from './sha256';

export type OwnedKind = 'endpoint' | 'network';

export interface OwnedName {
  kind: OwnedKind;
  /** The owner's tag in the name's scheme: ownerTag() (32 hex digits) or, in a short name of the previous version, 12. */
  tag: string;
  /** Names of earlier versions spell the owner out. */
  owner?: Owner;
  /** Earlier delegated-NIC network names: the NIC MAC, "AA-BB-CC-DD-EE-FF". */
  mac?: string;
}

const PREFIX: Record<OwnedKind, string> = { endpoint: 'ep', network: 'nic' };

/** 32 hex digits naming the owner: 128 bits of SHA-256. */
export function ownerTag(owner: Owner): string {
  return sha256Hex(`hcn-cni\0owner\0${owner.containerId}\0${owner.ifname}`).slice(0, 32);
}

function check(kind: OwnedKind, tag: string): string {
  return sha256Hex(`hcn-cni\0${kind}\0${tag}`).slice(0, 8);
}

export function endpointName(owner: Owner): string {
  const tag = ownerTag(owner);
  return `hcn-ep-${tag}${check('endpoint', tag)}`;
}

export function nicNetworkName(owner: Owner): string {
  const tag = ownerTag(owner);
  return `hcn-nic-${tag}${check('network', tag)}`;
}

/** A tag of the previous version's short names: 48 bits, which two owners can be made to share. */
export function weakTag(tag: string): boolean {
  return tag.length === 12;
}

/** Every tag a name of this owner may carry: today's, and the previous version's short one. */
export function ownerTags(owner: Owner): [string, string] {
  return [ownerTag(owner), shortTag(owner)];
}

/** Whether a parsed name of ours stands for this owner (in any scheme). */
export function namesOwner(parsed: OwnedName, owner: Owner): boolean {
  if (parsed.owner) return parsed.owner.containerId === owner.containerId && parsed.owner.ifname === owner.ifname;
  return ownerTags(owner).includes(parsed.tag);
}

/** What a name of ours says, or undefined for any other name (including a forged one). */
export function parseOwnedName(name: string): OwnedName | undefined {
  const m = /^hcn-(ep|nic)-([0-9a-f]{32})([0-9a-f]{8})$/.exec(name);
  if (m) {
    const kind: OwnedKind = m[1] === PREFIX.endpoint ? 'endpoint' : 'network';
    return check(kind, m[2]!) === m[3] ? { kind, tag: m[2]! } : undefined;
  }
  return parseShortName(name) ?? parseLegacyName(name);
}

/** Owners by tag, from whatever the caller knows (records, intents, tombstones): each under both of its tags. */
export function ownersByTag(owners: Iterable<Owner>): Map<string, Owner> {
  const out = new Map<string, Owner>();
  for (const o of owners)
    for (const tag of ownerTags(o)) out.set(tag, { containerId: o.containerId, ifname: o.ifname });
  return out;
}

// ---- names of earlier versions --------------------------------------------------------------------------------

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

/** The previous version's tag: two FNV-1a passes with different offsets, 48 bits. */
function shortTag(owner: Owner): string {
  const text = `${owner.containerId}\0${owner.ifname}`;
  return hex(fnv(text), 8) + hex(fnv(text, 0x050c5d1f), 4);
}

function parseShortName(name: string): OwnedName | undefined {
  const m = /^hcn-(ep|nic)-([0-9a-f]{12})([0-9a-f]{4})$/.exec(name);
  if (!m) return undefined;
  const kind: OwnedKind = m[1] === PREFIX.endpoint ? 'endpoint' : 'network';
  return hex(fnv(`hcn-cni\0${kind}\0${m[2]!}`), 4) === m[3] ? { kind, tag: m[2]! } : undefined;
}

function legacyHash(kind: OwnedKind, owner: Owner, mac: string): string {
  return hex(fnv(`hcn-cni\0${kind}\0${owner.containerId}\0${owner.ifname}\0${mac}`), 8);
}

function parseLegacyName(name: string): OwnedName | undefined {
  const m = /^hcn-cni_(ep|nic)_(.+)_([0-9a-f]{8})$/.exec(name);
  if (!m) return undefined;
  const kind: OwnedKind = m[1] === PREFIX.endpoint ? 'endpoint' : 'network';
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

/** For tests and tools that must make names of the previous version (an upgrade's leftovers). */
export function shortNameOfPreviousVersion(kind: OwnedKind, owner: Owner): string {
  const tag = shortTag(owner);
  return `hcn-${PREFIX[kind]}-${tag}${hex(fnv(`hcn-cni\0${kind}\0${tag}`), 4)}`;
}
