/**
 * What an older HNS does not have, by version, with the ranges hcsshim uses to decide the same
 * (microsoft/hcsshim hcn/hcnsupport.go, hcn/hcnglobals.go; shared with the plugin in src/hns/features.ts):
 *  - network flags DisableHostPort (HNS 15.1, DisableHostPortVersion) and EnableIov (15.4, AccelnetVersion; flag
 *    values 1024 and 8192: microsoft/hcsshim hcn/hcnnetwork.go);
 *  - the Iov endpoint policy (15.4, AccelnetVersion: Azure/azure-container-networking sets it with EnableIov,
 *    network/policy/policy_windows.go AddAccelnetPolicySetting);
 *  - an OutBoundNAT policy with Destinations, i.e. DSR (9.3–9.x, 10.2 on: DSRVersion).
 * The InterfaceParameters policy (MTU) has no hcsshim range: it is new in HCN schema 2.4 (MicrosoftDocs/
 * Virtualization-Documentation virtualization/api/hcn/HNS_Schema.md EndpointPolicyType), and "HNS 10.0 on" for it is
 * our inference (see src/hns/features.ts), not verified on a host.
 * hcsshim only reports support (hcn/hcn.go DSRSupported, AccelnetSupported, DisableHostPortSupported) and leaves the
 * check to its callers; that HNS itself refuses these on older versions, and with which code, is not in the public
 * sources: our assumption. The simulator refuses them with the invalid-network / invalid-policy
 * codes, so a client that sends them where hcsshim would not is caught.
 */
import { formatVersion, supports, type HnsVersion } from '../hns/features';
import { HR } from '../hns/hresults';
import type { Policy } from './model';
import { fail } from './sim-error';

const DISABLE_HOST_PORT = 1024;
const ENABLE_IOV = 8192;

export function checkNetworkFlags(flags: number, version: HnsVersion): void {
  const shown = formatVersion(version);
  if ((flags & DISABLE_HOST_PORT) !== 0 && !supports(version, 'disableHostPort'))
    fail(HR.INVALID_NETWORK, `DisableHostPort on HNS ${shown}`);
  if ((flags & ENABLE_IOV) !== 0 && !supports(version, 'iov')) fail(HR.INVALID_NETWORK, `EnableIov on HNS ${shown}`);
}

export function checkEndpointPolicies(policies: readonly Policy[], version: HnsVersion): void {
  const shown = formatVersion(version);
  for (const p of policies) {
    if (p.type === 'Iov' && !supports(version, 'iov')) fail(HR.INVALID_POLICY_TYPE, `Iov on HNS ${shown}`);
    if (p.type === 'InterfaceParameters' && !supports(version, 'interfaceParameters'))
      fail(HR.INVALID_POLICY_TYPE, `InterfaceParameters on HNS ${shown}`);
    if (
      p.type === 'OutBoundNAT' &&
      Array.isArray(p.settings.Destinations) &&
      p.settings.Destinations.length > 0 &&
      !supports(version, 'dsr')
    ) {
      fail(HR.INVALID_POLICY, `OutBoundNAT Destinations (DSR) on HNS ${shown}`);
    }
  }
}
