/**
 * Address families: what the host and the chosen API can carry. Dual-stack endpoints are an HCN (v2) feature of HNS
 * 11.10 and later (microsoft/hcsshim hcn/hcnglobals.go IPv6DualStackVersion, checked client-side by hcsshim's
 * hcn/hcn.go IPv6DualStackSupported); sdnbridge and win-bridge only do IPv6 on their HCN paths. So IPv6 on HNS v1
 * (apiVersion 1, or a host without HCN) or on an older HNS is refused with a reason, before anything is created.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { NetConf } from '../cni/types';
import { describeRequirement, formatVersion, minimumVersion, supports } from '../hns/features';
import type { Hcn } from '../hns/hcn';
import { familyOf } from '../net/ipv4';
import type { ApiChoice } from './api-version';

/** The first IPv6 value of the configuration that the pod's endpoint needs ([key path, value]), if any. */
export function staticIpv6(conf: NetConf): [string, string] | undefined {
  const s = conf.subnets?.find((x) => x.family === 6);
  if (s) return s.prefix ? ['subnet', s.prefix] : ['gateway', s.gateway!];
  const i = conf.portMappings.findIndex((m) => m.hostIP && familyOf(m.hostIP) === 6);
  if (i >= 0) return [`runtimeConfig.portMappings[${i}].hostIP`, conf.portMappings[i]!.hostIP!];
  return undefined;
}

/** What says whether an endpoint can have IPv6: the API in use and the HNS version (undefined: HNS cannot say). */
export type Ipv6Host = Pick<ApiChoice, 'version' | 'reason' | 'hnsVersion'>;

/**
 * requireIpv6: throws when the chosen API or the host cannot give an endpoint an IPv6 address. `what` names the
 * value that needs IPv6 ("subnet \"fd00::/64\"", "the IPv6 address fd00::5 from IPAM"). An ADD asks the HNS version
 * once, in its plan (add-plan.ts), and passes it here.
 */
export function requireIpv6(host: Ipv6Host, what: string): void {
  if (host.version === 1) {
    throw new CniError(
      CniCode.UNSUPPORTED_FIELD,
      `unsupported field: ${what} is IPv6, which needs the HCN (v2) API, and this ADD uses HNS v1 (${host.reason}); dual-stack endpoints exist only in HCN (HNS ${minimumVersion('ipv6DualStack')} and later): use "apiVersion": 2 or "auto"`,
    );
  }
  const v = host.hnsVersion;
  if (v && !supports(v, 'ipv6DualStack')) {
    throw new CniError(
      CniCode.API_UNAVAILABLE,
      `${what} is IPv6, and HNS ${formatVersion(v)} on this host cannot give endpoints IPv6 addresses (IPv6 dual-stack needs HNS ${describeRequirement('ipv6DualStack')})`,
    );
  }
}

/**
 * requireIpv6 for a verb that has not asked the HNS version (STATUS): asked here when the choice does not carry it.
 * The version is only a courtesy check there; HNS itself has the last word.
 */
export async function requireIpv6Asking(choice: ApiChoice, hcn: Hcn, what: string): Promise<void> {
  let v = choice.hnsVersion;
  if (choice.version === 2 && !v && hcn.capabilities.v1Supported) {
    try {
      v = await hcn.version();
    } catch {
      v = undefined; // the version is only a courtesy check here; HNS itself has the last word
    }
  }
  requireIpv6({ ...choice, hnsVersion: v }, what);
}
