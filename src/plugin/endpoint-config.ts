/**
 * What goes into an endpoint besides its IP: policies from every source the incumbents use (AdditionalArgs,
 * win-bridge policies, runtimeConfig.portMappings, outbound-NAT exceptions, loopback DSR, MTU) and DNS from the
 * configuration, the runtime and the pod's namespace. Policies are translated up front, before anything is created,
 * so a bad one fails the ADD with nothing to undo.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { Dns, NetConf } from '../cni/types';
import type { Logger } from '../log/logger';
import { loopbackDsr, portMapping, render, toTyped, withOutboundNatExceptions } from '../hns/policies';
import type { TypedPolicy } from '../hns/schema';

/** Endpoint policies in v2 typed form, validated for the API in use (render throws for v2-only policies on v1). */
export function endpointPolicies(conf: NetConf, api: 1 | 2, log: Logger): TypedPolicy[] {
  let policies = conf.endpointPolicies.map((p) => toTyped(p.value, p.source));
  for (const m of conf.portMappings) {
    if (m.protocol === 'sctp') {
      throw new CniError(CniCode.UNSUPPORTED_FIELD, `unsupported field: runtimeConfig.portMappings protocol "sctp" (HNS maps tcp and udp only)`);
    }
    policies.push(portMapping(m));
  }
  policies = withOutboundNatExceptions(policies, conf.outboundNatExceptions);
  if (conf.mtu !== undefined) {
    if (api === 2) policies.push({ Type: 'InterfaceParameters', Settings: { Mtu: conf.mtu } });
    else log.warn({ mtu: conf.mtu }, 'mtu is not applied: HNS v1 has no InterfaceParameters policy');
  }
  if (conf.loopbackDSR && api === 1) {
    throw new CniError(CniCode.UNSUPPORTED_FIELD, 'unsupported field: loopbackDSR true needs the HCN (v2) API, and this host uses HNS v1');
  }
  render(policies, api); // throws PolicyError for what the API cannot express
  return policies;
}

/** Adds the policies that depend on the pod's IP. */
export function withPodIp(policies: TypedPolicy[], conf: NetConf, podIp: string | undefined): TypedPolicy[] {
  return conf.loopbackDSR && podIp ? [...policies, loopbackDsr(podIp)] : policies;
}

export function networkPolicies(conf: NetConf): TypedPolicy[] {
  return conf.networkPolicies.map((p) => toTyped(p.value, p.source));
}

/**
 * The pod's DNS: the runtime's (capability dns) wins over the configuration's, which wins over IPAM's. Without a
 * runtime search list, the pod namespace's service domain is put first, as sdnbridge does:
 * search ["svc.cluster.local"] in namespace "web" becomes ["web.svc.cluster.local", "svc.cluster.local"].
 */
export function podDns(conf: NetConf, args: Readonly<Record<string, string>>, ipamDns: Dns | undefined): Required<Pick<Dns, 'nameservers' | 'search'>> & Dns {
  const rt = conf.runtimeDns;
  const nameservers = rt?.servers?.length ? rt.servers : conf.dns.nameservers?.length ? conf.dns.nameservers : ipamDns?.nameservers ?? [];
  let search: string[];
  if (rt?.searches?.length) search = [...rt.searches];
  else {
    search = [...(conf.dns.search?.length ? conf.dns.search : ipamDns?.search ?? [])];
    const ns = args.K8S_POD_NAMESPACE;
    if (ns && search[0] && !search[0].startsWith(`${ns}.`)) search.unshift(`${ns}.${search[0]}`);
  }
  const out: Required<Pick<Dns, 'nameservers' | 'search'>> & Dns = { nameservers: [...nameservers], search };
  const domain = conf.dns.domain ?? ipamDns?.domain;
  if (domain) out.domain = domain;
  const options = rt?.options?.length ? rt.options : conf.dns.options ?? ipamDns?.options;
  if (options?.length) out.options = [...options];
  return out;
}
