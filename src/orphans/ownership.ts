/**
 * Names that say who owns an HNS object, so a leak is recognisable from HNS alone, even with the state lost:
 *
 *   endpoint:                    hcn-cni_ep_<containerId>_<ifname>_<h>
 *   delegated-NIC network:       hcn-cni_nic_<containerId>_<ifname>_<MAC as 12 hex>_<h>
 *
 * <h> is 8 hex digits of a 32-bit FNV-1a hash over the other parts. It makes the split between container id and
 * ifname unambiguous (both may contain '_'; only one split matches the hash), and a name that merely looks like ours
 * (a typo, another tool's naming) is still treated as foreign: we never delete what we cannot prove is ours. It is a
 * check against accidents, not an authentication (a keyed hash would need a secret on every node); FNV instead of
 * SHA-256 because loading node:crypto costs every plugin start several milliseconds.
 * Only [A-Za-z0-9_.-] appear, which HNS, vSwitch and interface names all accept.
 */
import type { Owner } from '../state/records';

export const NAME_PREFIX = 'hcn-cni';

export type OwnedKind = 'endpoint' | 'network';

export interface OwnedName {
  kind: OwnedKind;
  owner: Owner;
  /** Delegated-NIC networks: the NIC MAC, "AA-BB-CC-DD-EE-FF". */
  mac?: string;
}

function hash(kind: OwnedKind, owner: Owner, mac12: string): string {
  const text = `${NAME_PREFIX}\0${kind}\0${owner.containerId}\0${owner.ifname}\0${mac12}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

function mac12(mac: string): string {
  return mac.replace(/[-:]/g, '').toUpperCase();
}

export function endpointName(owner: Owner): string {
  return `${NAME_PREFIX}_ep_${owner.containerId}_${owner.ifname}_${hash('endpoint', owner, '')}`;
}

export function nicNetworkName(owner: Owner, mac: string): string {
  const m = mac12(mac);
  return `${NAME_PREFIX}_nic_${owner.containerId}_${owner.ifname}_${m}_${hash('network', owner, m)}`;
}

/** The owner encoded in a name of ours, or undefined for any other name (including a forged one). */
export function parseOwnedName(name: string): OwnedName | undefined {
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
    if (owner.ifname && hash(kind, owner, mac) === m[3]) {
      return mac ? { kind, owner, mac: mac.match(/../g)!.join('-') } : { kind, owner };
    }
  }
  return undefined;
}
