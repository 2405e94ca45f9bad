/**
 * Policies in HNS's two dialects. v1 (HNSCall, and v1 JSON given to HcnCreate*) writes them flat:
 * `{"Type":"ROUTE","DestinationPrefix":…,"NeedEncap":true}`; v2 writes them typed: `{"Type":"SDNRoute","Settings":{…}}`.
 * The store keeps the v2 typed form; this module validates input in either dialect and renders both.
 *
 * Errors are HNS's: a type the object does not know → HCN_E_INVALID_POLICY_TYPE (0x803B000E); a known type whose
 * settings are not an object, miss a required field or carry a field of the wrong kind → HCN_E_INVALID_POLICY
 * (0x803B000D, calico#8465); a port mapping without an internal port → HCN_E_INVALID_INTERNAL_PORT (0x803B002D).
 */
import { HR } from '../hns/hresults';
import { isIpv4, isIpv6 } from '../net/addr';
import { isIpOrCidr } from './prefix';
import { isObj, objectOrJson, type Obj } from './json-doc';
import type { Policy } from './model';
import { fail } from './sim-error';
export type PolicyScope = 'network' | 'endpoint' | 'subnet';
type Check = (v: unknown) => boolean;

const HCN_E_INVALID_INTERNAL_PORT = 0x803b002d;

const isStr: Check = (v) => typeof v === 'string';
const isBool: Check = (v) => typeof v === 'boolean';
const isUint: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;
const isPort: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535;
const isIp: Check = (v) => typeof v === 'string' && (v === '' || isIpv4(v) || isIpv6(v));
const isPrefix: Check = (v) => isIpOrCidr(v);
const isPrefixList: Check = (v) => Array.isArray(v) && v.every(isPrefix);
const isProtocolNumber: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255;
const oneOf =
  (...names: string[]): Check =>
  (v) =>
    typeof v === 'string' && names.some((n) => n.toLowerCase() === v.toLowerCase());
const isVlan: Check = (v) => isUint(v) && (v as number) <= 4095;

interface Spec {
  v2: string;
  v1: string;
  scopes: PolicyScope[];
  /** Validators for v2 Settings fields; fields not listed are kept as given (HNS ignores what it does not know). */
  fields?: Record<string, Check>;
  required?: string[];
  /** v1 flat field → v2 Settings field, for plain renames. */
  rename?: Record<string, string>;
  /** Conversions beyond renames (run after the renames). */
  fromV1?: (flat: Obj, settings: Obj) => void;
  toV1?: (settings: Obj, flat: Obj) => void;
  /** Semantic checks beyond field kinds. */
  check?: (settings: Obj) => void;
}

const PROTOCOL_BY_NAME: Record<string, number> = { tcp: 6, udp: 17, icmp: 1, icmpv6: 58 };
const PROTOCOL_NAME: Record<number, string> = { 6: 'tcp', 17: 'udp', 1: 'icmp', 58: 'icmpv6' };

function protocolFromV1(p: unknown): number {
  if (typeof p === 'number' && isProtocolNumber(p)) return p;
  if (typeof p === 'string') {
    const n = PROTOCOL_BY_NAME[p.toLowerCase()] ?? (/^\d{1,3}$/.test(p) ? Number(p) : undefined);
    if (n !== undefined && n <= 255) return n;
  }
  return fail(HR.INVALID_POLICY, `protocol ${JSON.stringify(p)}`);
}

/**
 * The policy types HNS knows, by scope. v2 names and scopes: microsoft/hcsshim hcn/hcnpolicy.go (EndpointPolicyType,
 * NetworkPolicyType, SubnetPolicyType), field names from its *PolicySetting structs; v1 names: microsoft/hcsshim
 * internal/hns/hnspolicy.go (PolicyType). A type in neither is refused (HCN_E_INVALID_POLICY_TYPE).
 */
const SPECS: Spec[] = [
  {
    v2: 'OutBoundNAT',
    v1: 'OutBoundNAT',
    scopes: ['endpoint'],
    fields: {
      VirtualIP: isIp,
      Exceptions: isPrefixList,
      Destinations: isPrefixList,
      Flags: isUint,
      MaxPortPoolUsage: isUint,
    },
    rename: { ExceptionList: 'Exceptions', VIP: 'VirtualIP' },
  },
  {
    v2: 'PortMapping',
    v1: 'NAT',
    scopes: ['endpoint'],
    fields: { Protocol: isProtocolNumber, InternalPort: isPort, ExternalPort: isPort, VIP: isIp, Flags: isUint },
    fromV1: (flat, s) => {
      if (flat.Protocol !== undefined) s.Protocol = protocolFromV1(flat.Protocol);
      // v1's ExternalPortReserved is v2's NatFlags.ExternalPortReserved (4).
      if (flat.ExternalPortReserved === true) s.Flags = (typeof s.Flags === 'number' ? s.Flags : 0) | 4;
      delete s.ExternalPortReserved;
    },
    toV1: (s, flat) => {
      if (typeof s.Protocol === 'number') flat.Protocol = PROTOCOL_NAME[s.Protocol] ?? String(s.Protocol);
    },
    check: (s) => {
      if (!s.InternalPort) fail(HCN_E_INVALID_INTERNAL_PORT, 'PortMapping without InternalPort');
    },
  },
  {
    v2: 'SDNRoute',
    v1: 'ROUTE',
    scopes: ['endpoint'],
    fields: { DestinationPrefix: isPrefix, NextHop: isIp, NeedEncap: isBool, AutomaticEndpointMonitor: isBool },
    required: ['DestinationPrefix'],
  },
  {
    v2: 'ACL',
    v1: 'ACL',
    scopes: ['endpoint'],
    fields: {
      Protocols: (v) => typeof v === 'string' && /^\s*\d{1,3}(\s*,\s*\d{1,3})*\s*$/.test(v),
      Action: oneOf('Allow', 'Block', 'Pass'),
      Direction: oneOf('In', 'Out'),
      LocalAddresses: isStr,
      RemoteAddresses: isStr,
      LocalPorts: isStr,
      RemotePorts: isStr,
      RuleType: oneOf('Host', 'Switch'),
      Priority: isUint,
      Id: isStr,
    },
    required: ['Action', 'Direction'],
    // v1 carries one protocol number (and single ports); v2 carries strings ("6", "6,17", "80,443").
    fromV1: (flat, s) => {
      delete s.Protocol;
      delete s.LocalPort;
      delete s.RemotePort;
      delete s.InternalPort;
      delete s.ServiceName;
      if (s.Protocols === undefined && flat.Protocol !== undefined) s.Protocols = String(protocolFromV1(flat.Protocol));
      if (s.LocalPorts === undefined && isPort(flat.LocalPort) && flat.LocalPort) s.LocalPorts = String(flat.LocalPort);
      if (s.RemotePorts === undefined && isPort(flat.RemotePort) && flat.RemotePort)
        s.RemotePorts = String(flat.RemotePort);
    },
    toV1: (s, flat) => {
      if (typeof s.Protocols === 'string' && /^\s*\d{1,3}\s*$/.test(s.Protocols)) {
        flat.Protocol = Number(s.Protocols);
        delete flat.Protocols;
      }
    },
  },
  {
    v2: 'QOS',
    v1: 'QOS',
    scopes: ['endpoint'],
    fields: { MaximumOutgoingBandwidthInBytes: isUint },
    required: ['MaximumOutgoingBandwidthInBytes'],
  },
  {
    v2: 'InterfaceParameters',
    v1: 'InterfaceParameters',
    scopes: ['endpoint'],
    fields: { Mtu: (v) => isUint(v) && (v as number) > 0 },
    required: ['Mtu'],
  },
  {
    v2: 'NetAdapterName',
    v1: 'NetAdapterName',
    scopes: ['network'],
    fields: { NetworkAdapterName: (v) => typeof v === 'string' && v.length > 0 },
    required: ['NetworkAdapterName'],
  },
  // v1 writes isolation as {"Type":"VLAN","VLAN":1} (network, subnet or endpoint); v2 as Settings.IsolationId.
  {
    v2: 'VLAN',
    v1: 'VLAN',
    scopes: ['endpoint', 'subnet'],
    fields: { IsolationId: isVlan },
    required: ['IsolationId'],
    rename: { VLAN: 'IsolationId' },
  },
  {
    v2: 'VSID',
    v1: 'VSID',
    scopes: ['endpoint', 'subnet'],
    fields: { IsolationId: isUint },
    required: ['IsolationId'],
    rename: { VSID: 'IsolationId' },
  },
  {
    v2: 'ProviderAddress',
    v1: 'PA',
    scopes: ['network', 'endpoint'],
    fields: { ProviderAddress: isIp },
    required: ['ProviderAddress'],
    rename: { PA: 'ProviderAddress' },
  },
  {
    v2: 'L4Proxy',
    v1: 'PROXY',
    scopes: ['network', 'endpoint'],
    fields: { IP: isIp, Port: isStr, ExceptionList: isPrefixList, Destination: isStr, OutboundNat: isBool },
  },
  { v2: 'L2Driver', v1: 'L2Driver', scopes: ['endpoint'] },
  { v2: 'EncapOverhead', v1: 'EncapOverhead', scopes: ['endpoint'], fields: { Overhead: isUint } },
  { v2: 'PortName', v1: 'PortName', scopes: ['endpoint'], fields: { Name: isStr } },
  { v2: 'AutomaticDNS', v1: 'AutomaticDNS', scopes: ['network'], fields: { Enable: isBool } },
  { v2: 'HostRoute', v1: 'HostRoute', scopes: ['network'] },
  { v2: 'VxlanPort', v1: 'VxlanPort', scopes: ['network'], fields: { Port: isPort } },
  {
    v2: 'RemoteSubnetRoute',
    v1: 'RemoteSubnetRoute',
    scopes: ['network'],
    fields: {
      DestinationPrefix: isPrefix,
      IsolationId: isUint,
      ProviderAddress: isIp,
      DistributedRouterMacAddress: isStr,
    },
  },
  { v2: 'DrMacAddress', v1: 'DrMacAddress', scopes: ['network'], fields: { Address: isStr } },
  { v2: 'InterfaceConstraint', v1: 'InterfaceConstraint', scopes: ['network', 'endpoint'] },
  ...['SourceMacAddress', 'VSwitchExtension', 'SetPolicy', 'LayerConstraint', 'NetworkACL'].map((t): Spec => ({
    v2: t,
    v1: t,
    scopes: ['network'],
  })),
  ...['L4WFPPROXY', 'Iov', 'TierAcl'].map((t): Spec => ({
    v2: t,
    v1: t,
    scopes: ['endpoint'],
  })),
  // v1-only types, kept as they come.
  ...['VNET', 'Isolation', 'ELB'].map((t): Spec => ({ v2: t, v1: t, scopes: ['network', 'endpoint'] })),
];

const byV2 = new Map(SPECS.map((s) => [s.v2.toLowerCase(), s]));
const byV1 = new Map(SPECS.map((s) => [s.v1.toLowerCase(), s]));

function validate(spec: Spec, settings: Obj): void {
  for (const f of spec.required ?? []) {
    if (settings[f] === undefined || settings[f] === null) fail(HR.INVALID_POLICY, `${spec.v2} without ${f}`);
  }
  for (const [f, ok] of Object.entries(spec.fields ?? {})) {
    if (settings[f] !== undefined && !ok(settings[f]))
      fail(HR.INVALID_POLICY, `${spec.v2}.${f} = ${JSON.stringify(settings[f])}`);
  }
  spec.check?.(settings);
}

/** One policy from its v2 typed form. */
export function policyFromV2(raw: unknown, scope: PolicyScope): Policy {
  if (!isObj(raw) || typeof raw.Type !== 'string') return fail(HR.INVALID_POLICY, 'policy without a Type');
  const spec = byV2.get(raw.Type.toLowerCase());
  if (!spec || !spec.scopes.includes(scope))
    return fail(HR.INVALID_POLICY_TYPE, `${raw.Type} is not a ${scope} policy`);
  const s: Obj = { ...objectOrJson(raw.Settings ?? {}, HR.INVALID_POLICY, `${spec.v2} Settings`) };
  if (spec.v2 === 'PortMapping' && typeof s.Protocol === 'string') s.Protocol = protocolFromV1(s.Protocol);
  validate(spec, s);
  return { type: spec.v2, settings: s };
}

/** One policy from its v1 flat form. v1 names (NAT, ROUTE, PA…) and, leniently, v2 names are accepted anywhere. */
export function policyFromV1(raw: unknown): Policy {
  if (!isObj(raw) || typeof raw.Type !== 'string') return fail(HR.INVALID_POLICY, 'policy without a Type');
  const spec = byV1.get(raw.Type.toLowerCase()) ?? byV2.get(raw.Type.toLowerCase());
  if (!spec) return fail(HR.INVALID_POLICY_TYPE, `unknown policy type ${raw.Type}`);
  const s: Obj = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k !== 'Type') s[spec.rename?.[k] ?? k] = v;
  }
  spec.fromV1?.(raw, s);
  validate(spec, s);
  return { type: spec.v2, settings: s };
}

export function parsePolicies(list: unknown, form: 'v1' | 'v2', scope: PolicyScope): Policy[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return fail(HR.INVALID_POLICY, 'Policies is not an array');
  return list.map((p) => (form === 'v2' ? policyFromV2(p, scope) : policyFromV1(p)));
}

export function policyToV2(p: Policy): { Type: string; Settings: Obj } {
  return { Type: p.type, Settings: structuredClone(p.settings) };
}

export function policyToV1(p: Policy): Obj {
  const spec = byV2.get(p.type.toLowerCase());
  const flat: Obj = { Type: spec?.v1 ?? p.type };
  const back = Object.fromEntries(Object.entries(spec?.rename ?? {}).map(([v1, v2]) => [v2, v1]));
  for (const [k, v] of Object.entries(p.settings)) flat[back[k] ?? k] = structuredClone(v);
  spec?.toV1?.(p.settings, flat);
  return flat;
}

/** Structural equality of two policies (used by Remove requests). */
export function samePolicy(a: Policy, b: Policy): boolean {
  return a.type === b.type && JSON.stringify(sortKeys(a.settings)) === JSON.stringify(sortKeys(b.settings));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isObj(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  return v;
}
