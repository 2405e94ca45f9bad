/**
 * The addresses step of an ADD: the pod's addresses from delegated IPAM (allocated by this invocation, released by its
 * rollback), from a chained plugin's prevResult, from the record being re-created, or none (HNS assigns them).
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { Dns, IpConfig, Route } from '../cni/types';
import { familyOf } from '../net/ipv4';
import type { AttachmentRecord } from '../state/records';
import type { AddRun, Addressing } from './add-steps';
import { requireIpv6 } from './families';

/** Addresses for a fresh ADD (IPAM when configured) or for re-creating a recorded attachment (no new allocation). */
export async function allocate(a: AddRun, reuse?: AttachmentRecord): Promise<Addressing> {
  if (reuse) {
    const r = reuse.result as { ips?: IpConfig[]; routes?: Route[]; dns?: Dns };
    return {
      ips: r.ips ?? [],
      routes: r.routes ?? [],
      dns: r.dns,
      ipamAllocated: reuse.ipamAllocated,
      ipamMac: undefined,
      fromIpam: reuse.ipamAllocated,
    };
  }
  const chained = chainedAddresses(a);
  if (chained) {
    const v6 = chained.ips.find((ip) => familyOf(ip.address) === 6);
    if (v6) requireIpv6(a.plan.choice, `the address ${v6.address} in prevResult`);
    return chained;
  }
  if (!a.ipam.configured) return { ips: [], routes: [], dns: undefined, ipamAllocated: false, ipamMac: undefined };
  const r = await a.ipam.add();
  a.undo.push('release the IPAM allocation', () => a.ipam.del(), { onlyIfClean: true });
  if (r.ips.length === 0)
    throw new CniError(CniCode.IPAM_FAILURE, `ipam plugin "${a.ipam.type}" returned no IP address`);
  // An HNS endpoint has at most one address per family (Azure CNI network/endpoint_windows.go: "HNS currently
  // supports one IP address and one IPv6 address per endpoint"; sdnbridge takes one of each).
  for (const family of [4, 6] as const) {
    const of = r.ips.filter((ip) => familyOf(ip.address) === family);
    if (of.length > 1) {
      throw new CniError(
        CniCode.IPAM_FAILURE,
        `ipam plugin "${a.ipam.type}" returned ${of.length} IPv${family} addresses (${of.map((ip) => ip.address).join(', ')}); an HNS endpoint takes one address per family`,
      );
    }
  }
  const v6 = r.ips.find((ip) => familyOf(ip.address) === 6);
  if (v6) requireIpv6(a.plan.choice, `the address ${v6.address} from ipam plugin "${a.ipam.type}"`);
  return {
    ips: r.ips,
    routes: r.routes,
    dns: r.dns,
    ipamAllocated: true,
    ipamMac: r.interfaces.find((i) => i.mac)?.mac,
    fromIpam: true,
  };
}

/**
 * chainedAddresses: an ADD after another plugin in a chain gets that plugin's result as prevResult; its addresses
 * (an IPAM-like plugin such as static before us) are the pod's. Not ours to release: ipamAllocated stays false.
 * With delegated IPAM configured too, two sources would claim the address: code 7 rather than a silent choice.
 */
export function chainedAddresses(a: Pick<AddRun, 'plan' | 'ipam'>): Addressing | undefined {
  const prev = a.plan.conf.prevResult;
  if (!prev || prev.ips.length === 0) return undefined;
  if (a.ipam.configured) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `invalid network configuration: "prevResult" carries ${prev.ips.map((ip) => ip.address).join(', ')} from an earlier plugin of the chain, and "ipam" (${a.ipam.type}) would allocate another; remove one of them`,
    );
  }
  // An HNS endpoint takes one address per family, as from IPAM (above).
  for (const family of [4, 6] as const) {
    const of = prev.ips.filter((ip) => familyOf(ip.address) === family);
    if (of.length > 1) {
      throw new CniError(
        CniCode.INVALID_NETWORK_CONFIG,
        `invalid network configuration: "prevResult" carries ${of.length} IPv${family} addresses (${of.map((ip) => ip.address).join(', ')}); an HNS endpoint takes one address per family`,
      );
    }
  }
  const ips = prev.ips.map((ip) =>
    ip.gateway ? { address: ip.address, gateway: ip.gateway } : { address: ip.address },
  );
  const dns = prev.dns.nameservers?.length || prev.dns.search?.length || prev.dns.domain ? prev.dns : undefined;
  return { ips, routes: prev.routes, dns, ipamAllocated: false, ipamMac: undefined, fromIpam: true };
}
