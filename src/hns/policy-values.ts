/**
 * Checks the values of the policies we translate, before anything reaches HNS. HNS answers a bad value with one
 * HRESULT for the whole endpoint (an empty ROUTE DestinationPrefix comes back as HCN_E_INVALID_POLICY, naming
 * nothing); here the operator learns which key of which policy is wrong and what it holds.
 *
 * Field meanings follow the HCN schema (microsoft/hcsshim hcn/hcnpolicy.go: OutboundNatPolicySetting,
 * PortMappingPolicySetting, SDNRoutePolicySetting, AclPolicySetting, QosPolicySetting, ProviderAddressEndpointPolicySetting,
 * VlanPolicySetting, VsidPolicySetting). Addresses may be of either family: HNS takes IPv6 exceptions and routes.
 * Policy types we do not translate pass through unchecked: their values are not ours to judge.
 */
import { isIpAddress, isIpCidr, isIpv4 } from '../net/addr';

export type Problem = { key: string; what: string; value: unknown };

type Check = (v: unknown) => string | undefined;

const ipOrCidr: Check = (v) =>
  typeof v === 'string' && (isIpAddress(v) || isIpCidr(v)) ? undefined : 'an IP address or CIDR';
const cidr: Check = (v) => (typeof v === 'string' && isIpCidr(v) ? undefined : 'a non-empty IP prefix in CIDR form');
const ip: Check = (v) => (typeof v === 'string' && isIpAddress(v) ? undefined : 'an IP address');
const ipv4: Check = (v) => (typeof v === 'string' && isIpv4(v) ? undefined : 'an IPv4 address');
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'true or false');
const int =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? undefined
      : `an integer from ${min} to ${max}`;
const list =
  (each: Check, what: string): Check =>
  (v) =>
    Array.isArray(v) && v.every((e) => each(e) === undefined) ? undefined : `a list of ${what}`;
const oneOf =
  (...choices: string[]): Check =>
  (v) =>
    typeof v === 'string' && choices.some((c) => c.toLowerCase() === v.toLowerCase())
      ? undefined
      : `one of ${choices.map((c) => `"${c}"`).join(', ')}`;
/** ACL address and port lists are comma-separated strings in both dialects ("10.0.0.0/8,168.63.129.16", "80,443"). */
const commaList =
  (each: (s: string) => boolean, what: string): Check =>
  (v) =>
    typeof v === 'string' && (v === '' || v.split(',').every((s) => each(s.trim())))
      ? undefined
      : `a comma-separated list of ${what}`;
const port = (s: string) => /^\d{1,5}$/.test(s) && Number(s) <= 65535;
const portOrRange = (s: string) => {
  const [a, b, ...rest] = s.split('-');
  return rest.length === 0 && port(a!) && (b === undefined || (port(b) && Number(b) >= Number(a)));
};
const protocolNumber = (s: string) => /^\d{1,3}$/.test(s) && Number(s) <= 255;

/** Per HCN policy type (v2 names, lower case): the Settings fields we check. */
const CHECKS: Record<string, Record<string, Check>> = {
  outboundnat: {
    Exceptions: list(ipOrCidr, 'IP addresses or CIDRs'),
    Destinations: list(ipOrCidr, 'IP addresses or CIDRs'),
    VirtualIP: ip,
    Flags: int(0, 2 ** 32 - 1),
  },
  portmapping: { InternalPort: int(0, 65535), ExternalPort: int(0, 65535), VIP: ip, Flags: int(0, 2 ** 32 - 1) },
  sdnroute: { DestinationPrefix: cidr, NextHop: ip, NeedEncap: bool },
  acl: {
    Action: oneOf('Allow', 'Block', 'Pass'),
    Direction: oneOf('In', 'Out'),
    RuleType: oneOf('Host', 'Switch'),
    Priority: int(0, 65535),
    LocalAddresses: commaList((s) => isIpAddress(s) || isIpCidr(s), 'IP addresses or CIDRs'),
    RemoteAddresses: commaList((s) => isIpAddress(s) || isIpCidr(s), 'IP addresses or CIDRs'),
    LocalPorts: commaList(portOrRange, 'ports or port ranges'),
    RemotePorts: commaList(portOrRange, 'ports or port ranges'),
    Protocols: commaList(protocolNumber, 'protocol numbers'),
  },
  qos: { MaximumOutgoingBandwidthInBytes: int(0, Number.MAX_SAFE_INTEGER) },
  provideraddress: { ProviderAddress: ipv4 },
  vlan: { IsolationId: int(1, 4094) },
  vsid: { IsolationId: int(0, 2 ** 24 - 1) },
};

/** Fields a policy of that type cannot do without (HNS refuses it without them). */
const REQUIRED: Record<string, string[]> = {
  sdnroute: ['DestinationPrefix'],
  provideraddress: ['ProviderAddress'],
  portmapping: ['InternalPort', 'ExternalPort'],
  vlan: ['IsolationId'],
  vsid: ['IsolationId'],
};

/**
 * policyProblem: the first bad value of a typed policy, or undefined. `keyOf` turns a Settings field into the key the
 * configuration used (v1 flat "ExceptionList" or v2 "Settings.Exceptions").
 */
export function policyProblem(
  type: string,
  settings: Record<string, unknown>,
  keyOf: (field: string) => string,
): Problem | undefined {
  const t = type.toLowerCase();
  const checks = CHECKS[t];
  if (!checks) return undefined;
  for (const field of REQUIRED[t] ?? []) {
    if (settings[field] === undefined)
      return { key: keyOf(field), what: `set (a ${type} policy needs it)`, value: undefined };
  }
  for (const [field, check] of Object.entries(checks)) {
    const v = settings[field];
    if (v === undefined) continue;
    const what = check(v);
    if (what !== undefined) return { key: keyOf(field), what, value: v };
  }
  return undefined;
}
