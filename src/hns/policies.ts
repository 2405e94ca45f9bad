/**
 * Endpoint and network policies in both of HNS's dialects. Configurations in the field carry either form (Azure CNI's
 * AdditionalArgs are v1 flat: {"Type":"OutBoundNAT","ExceptionList":[…]}; sdnbridge's are v2 typed:
 * {"Type":"OutBoundNAT","Settings":{"Exceptions":[…]}}), whichever API the host ends up using. We keep the v2 typed
 * form as the canonical one and render v1 from it.
 */
import { policyProblem } from './policy-values';
import type { FlatPolicy, TypedPolicy } from './schema';

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

type Obj = Record<string, unknown>;

interface Mapping {
  v1: string;
  v2: string;
  /** v1 field → v2 Settings field. */
  fields: Record<string, string>;
  toV2?: (flat: Obj, settings: Obj) => void;
  toV1?: (settings: Obj, flat: Obj) => void;
}

const PROTOCOL_NUMBERS: Record<string, number> = { tcp: 6, udp: 17, icmp: 1, icmpv6: 58 };
const PROTOCOL_NAMES: Record<number, string> = { 6: 'tcp', 17: 'udp', 1: 'icmp', 58: 'icmpv6' };

export function protocolNumber(p: unknown, where: string): number {
  if (typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= 255) return p;
  if (typeof p === 'string') {
    const n = PROTOCOL_NUMBERS[p.toLowerCase()] ?? (/^\d+$/.test(p) ? Number(p) : undefined);
    if (n !== undefined && n <= 255) return n;
  }
  throw new PolicyError(`${where}: protocol ${JSON.stringify(p)} is not tcp, udp or a protocol number`);
}

const MAPPINGS: Mapping[] = [
  {
    v1: 'OutBoundNAT',
    v2: 'OutBoundNAT',
    fields: { ExceptionList: 'Exceptions', VIP: 'VirtualIP', Destinations: 'Destinations', Flags: 'Flags' },
  },
  {
    v1: 'NAT',
    v2: 'PortMapping',
    fields: { InternalPort: 'InternalPort', ExternalPort: 'ExternalPort', VIP: 'VIP', Flags: 'Flags' },
    toV2: (flat, s) => {
      if (flat.Protocol !== undefined) s.Protocol = protocolNumber(flat.Protocol, 'NAT policy');
    },
    // v1 NAT has Protocol, InternalPort, ExternalPort and ExternalPortReserved only (microsoft/hcsshim
    // internal/hns/hnspolicy.go NatPolicy): a host IP or flags cannot be said in v1.
    toV1: (s, flat) => {
      for (const k of Object.keys(s)) {
        if (!V1_NAT_FIELDS.has(k)) {
          throw new PolicyError(
            k === 'VIP'
              ? `a port mapping with a hostIP (${String(s.VIP)}) needs the HCN (v2) API: HNS v1's NAT policy has no host IP (this host uses HNS v1)`
              : `PortMapping setting ${k} has no HNS v1 equivalent (v1 NAT has Protocol, InternalPort, ExternalPort, ExternalPortReserved)`,
          );
        }
      }
      delete flat.VIP;
      delete flat.Flags;
      if (s.Protocol !== undefined) {
        const n = protocolNumber(s.Protocol, 'PortMapping policy');
        flat.Protocol = PROTOCOL_NAMES[n] ?? String(n);
      }
    },
  },
  {
    v1: 'ROUTE',
    v2: 'SDNRoute',
    fields: { DestinationPrefix: 'DestinationPrefix', NeedEncap: 'NeedEncap', NextHop: 'NextHop' },
  },
  {
    v1: 'ACL',
    v2: 'ACL',
    fields: {
      Action: 'Action',
      Direction: 'Direction',
      LocalAddresses: 'LocalAddresses',
      RemoteAddresses: 'RemoteAddresses',
      LocalPorts: 'LocalPorts',
      RemotePorts: 'RemotePorts',
      RuleType: 'RuleType',
      Priority: 'Priority',
      Id: 'Id',
    },
    // v2 has a string list ("6" or "6,17"); v1 has both a single Protocol number and the same Protocols string
    // (microsoft/hcsshim internal/hns/hnspolicy.go ACLPolicy), so the list goes across whole.
    toV2: (flat, s) => {
      if (flat.Protocol !== undefined) s.Protocols = String(protocolNumber(flat.Protocol, 'ACL policy'));
      if (flat.Protocols !== undefined) s.Protocols = String(flat.Protocols);
    },
    toV1: (s, flat) => {
      if (s.Protocols !== undefined) {
        for (const p of String(s.Protocols).split(',')) protocolNumber(p.trim(), 'ACL policy');
        flat.Protocols = String(s.Protocols);
      }
    },
  },
  { v1: 'QOS', v2: 'QOS', fields: { MaximumOutgoingBandwidthInBytes: 'MaximumOutgoingBandwidthInBytes' } },
  { v1: 'PA', v2: 'ProviderAddress', fields: { PA: 'ProviderAddress' } },
  { v1: 'VLAN', v2: 'VLAN', fields: { VLAN: 'IsolationId' } },
  { v1: 'VSID', v2: 'VSID', fields: { VSID: 'IsolationId' } },
];

const V1_NAT_FIELDS = new Set(['Protocol', 'InternalPort', 'ExternalPort', 'ExternalPortReserved']);

const BY_V1 = new Map(MAPPINGS.map((m) => [m.v1.toLowerCase(), m]));
const BY_V2 = new Map(MAPPINGS.map((m) => [m.v2.toLowerCase(), m]));

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Accepts a policy in either form and returns the v2 typed form. `where` names it in errors. The values of the types
 * we translate are checked (src/hns/policy-values.ts): a bad one is a PolicyError naming the key as the configuration
 * spelled it and its value, which the plugin answers with code 7.
 */
export function toTyped(policy: unknown, where = 'policy'): TypedPolicy {
  const typed = translate(policy, where);
  const typeKey = isObj(policy) && 'type' in policy && !('Type' in policy) ? 'type' : 'Type';
  const settingsKey = isObj(policy)
    ? policy.Settings !== undefined
      ? 'Settings'
      : policy.settings !== undefined
        ? 'settings'
        : undefined
    : undefined;
  const m = BY_V2.get(typed.Type.toLowerCase());
  const reverse = m && !settingsKey ? Object.fromEntries(Object.entries(m.fields).map(([v1, v2]) => [v2, v1])) : {};
  const keyOf = (field: string) =>
    settingsKey
      ? `${where}.${settingsKey}.${field}`
      : `${where}.${reverse[field] ?? (field === 'Protocols' && isObj(policy) && 'Protocol' in policy ? 'Protocol' : field)}`;
  const problem = policyProblem(typed.Type, typed.Settings ?? {}, keyOf);
  if (problem) {
    const got = problem.value === undefined ? 'nothing' : JSON.stringify(problem.value);
    throw new PolicyError(
      `"${problem.key}" must be ${problem.what}, got ${got} (${String((policy as Obj)[typeKey])} policy)`,
    );
  }
  return typed;
}

function translate(policy: unknown, where: string): TypedPolicy {
  if (!isObj(policy)) throw new PolicyError(`${where} must be an object, got ${JSON.stringify(policy)}`);
  const type = policy.Type ?? policy.type;
  if (typeof type !== 'string' || type === '') throw new PolicyError(`${where} has no string "Type"`);
  const settings = policy.Settings ?? policy.settings;
  if (settings !== undefined) {
    if (!isObj(settings)) throw new PolicyError(`${where}.Settings must be an object`);
    const m = BY_V2.get(type.toLowerCase());
    return { Type: m ? m.v2 : type, Settings: { ...settings } };
  }
  const m = BY_V1.get(type.toLowerCase()) ?? BY_V2.get(type.toLowerCase());
  const out: Obj = {};
  if (!m) {
    // A type we do not translate: keep its fields as they are.
    for (const [k, v] of Object.entries(policy)) if (k !== 'Type' && k !== 'type') out[k] = v;
    return { Type: type, Settings: out };
  }
  for (const [k, v] of Object.entries(policy)) {
    if (k === 'Type' || k === 'type') continue;
    const target = m.fields[k];
    if (target) out[target] = v;
    else if (k !== 'Protocol' && k !== 'Protocols') out[k] = v;
  }
  m.toV2?.(policy, out);
  return { Type: m.v2, Settings: out };
}

/** Renders a typed policy in the v1 flat form. */
export function toFlat(policy: TypedPolicy): FlatPolicy {
  const m = BY_V2.get(policy.Type.toLowerCase());
  const settings = policy.Settings ?? {};
  if (!m) {
    if (V2_ONLY.has(policy.Type.toLowerCase())) {
      throw new PolicyError(`policy ${policy.Type} exists only in the HCN (v2) API; this host uses HNS v1`);
    }
    return { Type: policy.Type, ...settings };
  }
  const reverse = Object.fromEntries(Object.entries(m.fields).map(([v1, v2]) => [v2, v1]));
  const flat: FlatPolicy = { Type: m.v1 };
  for (const [k, v] of Object.entries(settings)) {
    const target = reverse[k];
    if (target) flat[target] = v;
    else if (k !== 'Protocol' && k !== 'Protocols') flat[k] = v;
  }
  m.toV1?.(settings, flat);
  return flat;
}

const V2_ONLY = new Set([
  'interfaceparameters',
  'l4wfpproxy',
  'portname',
  'encapoverhead',
  'iov',
  'tieracl',
  'netadaptername',
]);

export function render(policies: TypedPolicy[], api: 1 | 2): Array<TypedPolicy | FlatPolicy> {
  return api === 2 ? policies : policies.map(toFlat);
}

/** NatFlags.IPv6: a port mapping for the endpoint's IPv6 address (microsoft/hcsshim hcn/hcnpolicy.go NatFlagsIPv6 = 2). */
export const NAT_FLAGS_IPV6 = 2;

/**
 * A PortMapping policy. `ipv6` marks the mapping for the IPv6 address (NatFlagsIPv6), as Azure CNI
 * (cni/network/network_windows.go getPoliciesFromRuntimeCfg) and sdnbridge (cni/cni.go GetEndpointInfo) do.
 */
export function portMapping(
  m: { protocol: string; hostPort: number; containerPort: number; hostIP?: string },
  ipv6 = false,
): TypedPolicy {
  const s: Obj = {
    Protocol: protocolNumber(m.protocol, 'portMappings'),
    InternalPort: m.containerPort,
    ExternalPort: m.hostPort,
  };
  if (m.hostIP && m.hostIP !== '0.0.0.0' && m.hostIP !== '::') s.VIP = m.hostIP;
  if (ipv6) s.Flags = NAT_FLAGS_IPV6;
  return { Type: 'PortMapping', Settings: s };
}

/**
 * Adds outbound-NAT exceptions of one address family: into an existing OutBoundNAT policy without Destinations of
 * that family when there is one (HNS wants one such policy per endpoint and family), else as a new policy. Families
 * never share a policy: sdnbridge's dual-stack configuration carries one OutBoundNAT for the IPv4 exceptions and
 * another for the IPv6 ones (microsoft/windows-container-networking example/l2bridgedualstack_host-local_ipam.conf).
 * A policy without exceptions counts as IPv4's, the family every peer NATs.
 */
export function withOutboundNatExceptions(
  policies: TypedPolicy[],
  exceptions: string[],
  family: 4 | 6 = 4,
): TypedPolicy[] {
  if (exceptions.length === 0) return policies;
  const out = policies.map((p) => ({ ...p, Settings: { ...(p.Settings ?? {}) } }));
  const familyOfPolicy = (p: { Settings: Obj }): 4 | 6 => {
    const list = Array.isArray(p.Settings.Exceptions) ? (p.Settings.Exceptions as unknown[]).map(String) : [];
    return list.some((e) => e.includes(':')) ? 6 : 4;
  };
  const existing = out.find(
    (p) => p.Type === 'OutBoundNAT' && !p.Settings.Destinations && familyOfPolicy(p) === family,
  );
  if (existing) {
    const have = Array.isArray(existing.Settings.Exceptions)
      ? (existing.Settings.Exceptions as unknown[]).map(String)
      : [];
    existing.Settings.Exceptions = [...new Set([...have, ...exceptions])];
    return out;
  }
  return [...out, { Type: 'OutBoundNAT', Settings: { Exceptions: [...new Set(exceptions)] } }];
}

/** win-bridge's loopback DSR: an OutBoundNAT policy whose destination is the pod's own IP (v2 only). */
export function loopbackDsr(podIp: string): TypedPolicy {
  return { Type: 'OutBoundNAT', Settings: { Destinations: [podIp] } };
}
