/** Names of hcn-cni's earliest versions, which spelled the owner out (src/orphans/ownership.ts parseLegacyName). */

/** hcn-cni_ep_<containerId>_<ifname>_<FNV-1a of kind, owner and MAC>: what those versions named an endpoint. */
export function legacyEndpointName(containerId: string, ifname: string): string {
  return `hcn-cni_ep_${containerId}_${ifname}_${legacyHash('endpoint', containerId, ifname, '')}`;
}

/** The 8 hex digits of FNV-1a those names end with. */
export function legacyHash(kind: string, containerId: string, ifname: string, mac: string): string {
  const text = `hcn-cni\0${kind}\0${containerId}\0${ifname}\0${mac}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
