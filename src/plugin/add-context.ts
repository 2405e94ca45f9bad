/** What every step of an ADD needs, gathered once. */
import { CniCode, CniError } from '../cni/cni-error';
import type { Dns, IpConfig, NetConf, Route, VerbContext } from '../cni/types';
import type { HnsApi, NetworkInfo } from '../hns/api';
import { newGuid } from '../net/guid';
import { familyOf } from '../net/ipv4';
import type { TypedPolicy } from '../hns/schema';
import type { Logger } from '../log/logger';
import type { AttachmentRecord, Owner } from '../state/records';
import type { StateStore } from '../state/store';
import type { ApiChoice } from './api-version';
import { requireIpv6 } from './families';
import type { RecordedAttach } from './attach';
import type { PluginRuntime } from './runtime';
import type { Undo } from './undo';

export interface AddContext {
  ctx: VerbContext;
  conf: NetConf;
  rt: PluginRuntime;
  log: Logger;
  store: StateStore;
  choice: ApiChoice;
  api: HnsApi;
  owner: Owner;
  attach: RecordedAttach;
  /** Endpoint policies, already validated for the API in use (without the pod-IP dependent ones). */
  policies: TypedPolicy[];
  /** Network policies (AdditionalArgs NetworkPolicy), for networks this ADD creates. */
  networkPolicies: TypedPolicy[];
  /** Flags of a delegated-NIC network (nicNetworkFlags), decided before anything is created. */
  nicFlags?: number;
  undo: Undo;
  /** What the audit just listed, so the bridge network is found without asking HNS again (undefined: ask). */
  listedNetworks?: NetworkInfo[];
}

/** Where the pod's addresses come from: delegated IPAM (this invocation), an existing record, or HNS. */
export interface Addressing {
  ips: IpConfig[];
  routes: Route[];
  dns: Dns | undefined;
  /** IPAM holds an allocation for this attachment (made now, or by the ADD that made the record). */
  ipamAllocated: boolean;
  /** MAC the IPAM result reported for the interface, if any. */
  ipamMac: string | undefined;
  /** The addresses were chosen before the endpoint (IPAM, a record, a chained prevResult), not by HNS. */
  fromIpam?: boolean;
}

/** Addresses for a fresh ADD (IPAM when configured) or for re-creating a recorded attachment (no new allocation). */
export async function allocate(a: AddContext, reuse?: AttachmentRecord): Promise<Addressing> {
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
    if (v6) await requireIpv6(a.choice, a.api.hcn, `the address ${v6.address} in prevResult`);
    return chained;
  }
  if (!a.ctx.ipam.configured) return { ips: [], routes: [], dns: undefined, ipamAllocated: false, ipamMac: undefined };
  const r = await a.ctx.ipam.add();
  a.undo.push('release the IPAM allocation', () => a.ctx.ipam.del(), { onlyIfClean: true });
  if (r.ips.length === 0)
    throw new CniError(CniCode.IPAM_FAILURE, `ipam plugin "${a.ctx.ipam.type}" returned no IP address`);
  // An HNS endpoint has at most one address per family (Azure CNI network/endpoint_windows.go: "HNS currently
  // supports one IP address and one IPv6 address per endpoint"; sdnbridge takes one of each).
  for (const family of [4, 6] as const) {
    const of = r.ips.filter((ip) => familyOf(ip.address) === family);
    if (of.length > 1) {
      throw new CniError(
        CniCode.IPAM_FAILURE,
        `ipam plugin "${a.ctx.ipam.type}" returned ${of.length} IPv${family} addresses (${of.map((ip) => ip.address).join(', ')}); an HNS endpoint takes one address per family`,
      );
    }
  }
  const v6 = r.ips.find((ip) => familyOf(ip.address) === 6);
  if (v6) await requireIpv6(a.choice, a.api.hcn, `the address ${v6.address} from ipam plugin "${a.ctx.ipam.type}"`);
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
export function chainedAddresses(a: Pick<AddContext, 'conf' | 'ctx'>): Addressing | undefined {
  const prev = a.ctx.verb === 'ADD' ? a.conf.prevResult : undefined;
  if (!prev || prev.ips.length === 0) return undefined;
  if (a.ctx.ipam.configured) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `invalid network configuration: "prevResult" carries ${prev.ips.map((ip) => ip.address).join(', ')} from an earlier plugin of the chain, and "ipam" (${a.ctx.ipam.type}) would allocate another; remove one of them`,
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

/** An id chosen before the create, so a DEL racing the create can name it; only HCN (v2) honours it. */
export function plannedId(a: AddContext): string | undefined {
  return a.choice.version === 2 ? newGuid() : undefined;
}
