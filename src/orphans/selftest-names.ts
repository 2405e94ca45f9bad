/**
 * Who a self-test (`hcn-cni selftest`) is, in the state and in HNS: an owner like a pod's (container id + ifname),
 * whose container id says it is a self-test's, so its objects carry the ownership scheme's names (the audit
 * recognises them) and its namespace — HCN namespaces have no name — has an id derived from the owner. That
 * derivation is what proves a namespace the self-test's own: the audit and the next self-test remove a namespace only
 * by the id a dead self-test claim of this state directory gives (selftest-leftovers.ts).
 */
import { sha256Hex } from './sha256';

export const SELFTEST_PREFIX = 'hcn-cni-selftest-';
const OWNER = /^hcn-cni-selftest-[0-9a-f]{16}$/;

export function isSelftestOwner(o: { containerId: string }): boolean {
  return OWNER.test(o.containerId);
}

/** A GUID (lower case, version-4 layout) from SHA-256 over the owner: the run's namespace id. */
export function namespaceIdOf(owner: { containerId: string; ifname: string }): string {
  const h = sha256Hex(`hcn-cni\0selftest-namespace\0${owner.containerId}\0${owner.ifname}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
