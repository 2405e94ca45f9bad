/**
 * What goes into an endpoint besides its IP: policies from every source the incumbents use (AdditionalArgs,
 * win-bridge policies, runtimeConfig.portMappings, outbound-NAT exceptions, loopback DSR, MTU) and DNS from the
 * configuration, the runtime and the pod's namespace. Policies are translated up front, before anything is created,
 * so a bad one fails the ADD with nothing to undo.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { Dns, NetConf } from '../cni/types';
import { describeRequirement, formatVersion, supports, type HnsVersion } from '../hns/features';
import type { Logger } from '../log/logger';
import { loopbackDsr, portMapping, render, toTyped, withOutboundNatExceptions } from '../hns/policies';
import { domainNameProblem, isDnsLabel } from '../net/dns-name';
import { familyOf } from '../net/ipv4';
import { NetworkFlags, type TypedPolicy } from '../hns/schema';

/**
 * Endpoint policies in v2 typed form, validated for the API in use (render throws for v2-only policies on v1) and
 * for the host's HNS version (hns/features.ts, hcsshim's feature ranges). The ones that depend on the pod's address
 * families (port mappings, outbound-NAT exceptions, loopback DSR) are added by podPolicies once the addresses are
 * known; they are rendered here too, so a bad one still fails up front.
 */
export function endpointPolicies(conf: NetConf, api: 1 | 2, log: Logger, hnsVersion?: HnsVersion): TypedPolicy[] {
  const policies = conf.endpointPolicies.map((p) => toTyped(p.value, p.source));
  checkPortMappings(conf, api);
  const shown = hnsVersion ? formatVersion(hnsVersion) : 'unknown';
  if (conf.mtu !== undefined) {
    // mtu is optional tuning: where HNS cannot take it, the pod gets HNS's default and the log says so.
    if (api !== 2) log.warn({ mtu: conf.mtu }, 'mtu is not applied: HNS v1 has no InterfaceParameters policy');
    else if (!supports(hnsVersion, 'interfaceParameters')) {
      log.warn(
        { mtu: conf.mtu, hnsVersion: shown },
        `mtu is not applied: the InterfaceParameters policy needs HNS ${describeRequirement('interfaceParameters')} (HCN schema 2.4)`,
      );
    } else policies.push({ Type: 'InterfaceParameters', Settings: { Mtu: conf.mtu } });
  }
  if (conf.loopbackDSR && api === 1) {
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      'unsupported field: loopbackDSR true needs the HCN (v2) API, and this host uses HNS v1',
    );
  }
  if (conf.loopbackDSR && !supports(hnsVersion, 'dsr')) {
    // win-bridge skips the policy silently here (containernetworking/plugins pkg/hns/netconf_windows.go
    // ApplyLoopbackDSRPolicy checks hcn.DSRSupported()); a pod that cannot reach itself through its service is worse.
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      `unsupported field: loopbackDSR true needs DSR, which HNS ${shown} lacks (DSR: HNS ${describeRequirement('dsr')})`,
    );
  }
  if (conf.iov) {
    requireIov(api, hnsVersion, shown);
    // Azure network/policy/policy_windows.go AddAccelnetPolicySetting: IovOffloadWeight 100, QueuePairsRequested 1,
    // InterruptModeration 0 (left out: hcsshim hcn/hcnpolicy.go IovPolicySetting fields are omitempty).
    policies.push({ Type: 'Iov', Settings: { IovOffloadWeight: 100, QueuePairsRequested: 1 } });
  }
  // HNS v1 has no IPv6 (an IPv6 address there is error 2 of its own), so only IPv4's share is rendered for it.
  render(podPolicies(policies, conf, { families: new Set(api === 1 ? [4] : [4, 6]), ipv4: undefined }, log), api); // throws PolicyError for what the API cannot express
  return policies;
}

/** Port mappings HNS cannot express are refused before anything is created. */
function checkPortMappings(conf: NetConf, api: 1 | 2): void {
  for (const m of conf.portMappings) {
    if (m.protocol === 'sctp') {
      throw new CniError(
        CniCode.UNSUPPORTED_FIELD,
        `unsupported field: runtimeConfig.portMappings protocol "sctp" (HNS maps tcp and udp only)`,
      );
    }
    if (api === 1 && m.hostIP && m.hostIP !== '0.0.0.0' && m.hostIP !== '::') {
      // HNS v1's NAT policy has no host IP (microsoft/hcsshim internal/hns/hnspolicy.go NatPolicy).
      throw new CniError(
        CniCode.UNSUPPORTED_FIELD,
        `unsupported field: runtimeConfig.portMappings hostIP ${m.hostIP} (port ${m.hostPort}) needs the HCN (v2) API; HNS v1's NAT policy has no host IP, and this host uses HNS v1`,
      );
    }
  }
}

/** iov's needs of the host; which mode may ask for it is the mode's to say (modes/bridge.ts bridgeMode.check). */
function requireIov(api: 1 | 2, hnsVersion: HnsVersion | undefined, shown: string): void {
  if (api !== 2)
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      'unsupported field: iov true needs the HCN (v2) API (HNS v1 networks have no flags, v1 endpoints no Iov policy), and this host uses HNS v1',
    );
  if (!supports(hnsVersion, 'iov')) {
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      `unsupported field: iov true needs HNS ${describeRequirement('iov')} (Accelnet), and this host's HNS is ${shown}`,
    );
  }
}

/**
 * The flags of a delegated-NIC network, as Azure CNI creates FrontendNIC networks (Azure network/network_windows.go):
 * EnableNonPersistent (a reboot clears it), DisableHostPort (no host vNIC on the pod's NIC) and, with iov,
 * EnableIov. DisableHostPort is gated on HNS 15.1 as hcsshim gates it (hcn/hcnsupport.go DisableHostPort): by
 * default it is set where HNS has it; asked for explicitly on a host without it, it is error 2. HNS v1 networks have
 * no flags (hcsshim internal/hns/hnsnetwork.go), so on v1 none are sent.
 */
export function nicNetworkFlags(conf: NetConf, api: 1 | 2, hnsVersion: HnsVersion | undefined): number {
  const shown = hnsVersion ? formatVersion(hnsVersion) : 'unknown';
  let flags: number = NetworkFlags.EnableNonPersistent;
  const hostPortGate = api === 2 && supports(hnsVersion, 'disableHostPort');
  if (conf.disableHostPort === true && !hostPortGate) {
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      `unsupported field: disableHostPort true needs the HCN (v2) API and HNS ${describeRequirement('disableHostPort')}; this host has ${api === 2 ? `HNS ${shown}` : 'HNS v1'}`,
    );
  }
  if (conf.disableHostPort ?? hostPortGate) flags |= NetworkFlags.DisableHostPort;
  if (conf.iov) flags |= NetworkFlags.EnableIov;
  return flags;
}

/**
 * Adds the policies that depend on the pod's address families, per family as the peers do:
 * - a port mapping for each family the pod has: the IPv6 one flagged NatFlagsIPv6 (Azure CNI
 *   cni/network/network_windows.go getPoliciesFromRuntimeCfg, sdnbridge cni/cni.go GetEndpointInfo); a hostIP
 *   restricts the mapping to its own family, which the pod must have (code 7 otherwise);
 * - outbound-NAT exceptions in one OutBoundNAT policy per family (withOutboundNatExceptions), for the families the
 *   pod has: the plugin never adds an IPv6 OutBoundNAT of its own unless IPv6 exceptions are configured;
 * - loopback DSR for the IPv4 address only: win-bridge (containernetworking/plugins pkg/hns/endpoint_windows.go
 *   ApplyLoopbackDSRPolicy), sdnbridge (common/core/network.go, epInfo.IPAddress) and Azure CNI
 *   (cni/network/network_windows.go getLoopbackDSRPolicy: "consider DSR policy only for ipv4 address") all do so.
 */
export function podPolicies(
  base: readonly TypedPolicy[],
  conf: NetConf,
  pod: { readonly families: ReadonlySet<number>; readonly ipv4: string | undefined },
  log: Logger,
): TypedPolicy[] {
  const { families, ipv4: podIpv4 } = pod;
  let out = [...base];
  conf.portMappings.forEach((m, i) => {
    const hostFamily = m.hostIP && m.hostIP !== '0.0.0.0' && m.hostIP !== '::' ? familyOf(m.hostIP) : undefined;
    if (hostFamily !== undefined && !families.has(hostFamily)) {
      throw new CniError(
        CniCode.INVALID_NETWORK_CONFIG,
        `invalid network configuration: "runtimeConfig.portMappings[${i}].hostIP" ${JSON.stringify(m.hostIP)} is IPv${hostFamily}, and the pod has no IPv${hostFamily} address`,
      );
    }
    if ((hostFamily ?? 4) === 4 && families.has(4)) out.push(portMapping(m));
    if ((hostFamily ?? 6) === 6 && families.has(6)) out.push(portMapping(m, true));
  });
  for (const family of [4, 6] as const) {
    const exceptions = conf.outboundNatExceptions.filter((c) => familyOf(c) === family);
    if (!families.has(family)) {
      if (exceptions.length)
        log.debug({ family, exceptions }, 'outbound-NAT exceptions of a family the pod does not have are not applied');
      continue;
    }
    out = withOutboundNatExceptions(out, exceptions, family);
  }
  if (conf.loopbackDSR) {
    if (podIpv4) out.push(loopbackDsr(podIpv4));
    else if (!families.has(4))
      log.warn(
        { families: [...families] },
        'loopbackDSR is not applied: the pod has no IPv4 address, and loopback DSR is IPv4-only (as in every peer)',
      );
  }
  return out;
}

export function networkPolicies(conf: NetConf): TypedPolicy[] {
  return conf.networkPolicies.map((p) => toTyped(p.value, p.source));
}

/**
 * The pod's DNS: the runtime's (capability dns) wins over the configuration's, which wins over IPAM's. Without a
 * runtime search list, the pod namespace's service domain is put first, as sdnbridge does:
 * search ["svc.cluster.local"] in namespace "web" becomes ["web.svc.cluster.local", "svc.cluster.local"].
 */
export function podDns(
  conf: NetConf,
  args: Readonly<Record<string, string>>,
  ipamDns: Dns | undefined,
): Required<Pick<Dns, 'nameservers' | 'search'>> & Dns {
  const rt = conf.runtimeDns;
  const nameservers = rt?.servers?.length
    ? rt.servers
    : conf.dns.nameservers?.length
      ? conf.dns.nameservers
      : (ipamDns?.nameservers ?? []);
  let search: string[];
  if (rt?.searches?.length) search = [...rt.searches];
  else {
    search = [...(conf.dns.search?.length ? conf.dns.search : (ipamDns?.search ?? []))];
    const ns = args.K8S_POD_NAMESPACE;
    const key = conf.dns.search?.length ? 'dns.search[0]' : "the IPAM result's dns.search[0]";
    if (ns && search[0] && !search[0].startsWith(`${ns}.`)) search.unshift(namespacedSearch(ns, search[0], key));
  }
  const out: Required<Pick<Dns, 'nameservers' | 'search'>> & Dns = { nameservers: [...nameservers], search };
  const domain = conf.dns.domain ?? ipamDns?.domain;
  if (domain) out.domain = domain;
  const options = rt?.options?.length ? rt.options : (conf.dns.options ?? ipamDns?.options);
  if (options?.length) out.options = [...options];
  return out;
}

/**
 * `<namespace>.<first search domain>`: a domain name like the rest of the list (src/net/dns-name.ts), since HNS gets
 * it the same way. The namespace comes from the runtime (CNI_ARGS); a Kubernetes namespace name is a DNS label
 * (kubernetes/kubernetes pkg/apis/core/validation ValidateNamespaceName: a DNS-1123 label), so anything else is a
 * bad environment (code 4); a valid one that makes the name too long is the configured domain's (code 7).
 */
function namespacedSearch(ns: string, first: string, key: string): string {
  if (!isDnsLabel(ns)) {
    throw new CniError(
      CniCode.INVALID_ENV,
      `invalid CNI_ARGS K8S_POD_NAMESPACE ${JSON.stringify(ns)}: must be a DNS label (1 to 63 letters, digits and "-"), as a Kubernetes namespace name is; it is put before the search domain ${JSON.stringify(first)}`,
    );
  }
  const name = `${ns}.${first}`;
  const why = domainNameProblem(name);
  if (why !== undefined) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `invalid network configuration: ${key.startsWith('dns') ? `"${key}"` : key} ${JSON.stringify(first)} with the pod's namespace ${JSON.stringify(ns)} before it is not a DNS domain name (${why})`,
    );
  }
  return name;
}
