/**
 * KEY_SPECS: every configuration key the plugin interprets, one declarative entry each: how it is read (its kind,
 * bounds and default, when it is a plain value), its meaning, its aliases, and the NetConf fields it fills. From it
 * are derived: the docs' configuration table (CONFIG_KEYS, type and default spelled from the rule), the parser's set
 * of known top-level keys (so a key cannot be handled without being documented: an undocumented key is reported as
 * unknown), the parser's bounds and defaults (DEFAULTS, config-read.ts's readSetting), and a compile-time check that
 * every NetConf field is filled by some key (test/cni/config-keys.test.ts).
 */
import { LOG_LEVELS } from '../log/logger';
import type { AdoptPeer, ApiVersionSetting, BridgeNetworkType, Mode, NetConf } from './types';

/** A key as the docs table shows it. */
export interface ConfigKey {
  /** Canonical spelling; nested keys are dotted ("runtimeConfig.portMappings"). Input matches case-insensitively. */
  key: string;
  type: string;
  /** Human-readable default ("none" when absent means "not set"). */
  default: string;
  meaning: string;
  /** Other keys accepted for the same setting (from the incumbents' configurations). */
  aliases?: readonly string[];
}

export interface BooleanRule {
  kind: 'boolean';
  value?: boolean;
}
export interface IntegerRule {
  kind: 'integer';
  min: number;
  max: number;
  value?: number;
}
export interface ChoiceRule<T extends string = string> {
  kind: 'choice';
  /** Canonical spellings; input matches any case. */
  choices: readonly T[];
  value?: T;
}
/** Read by a function of its own in the parser (several forms, aliases in other objects); only its default is here. */
export interface CustomRule<T = unknown> {
  kind: 'custom';
  value: T;
}
export type KeyRule = BooleanRule | IntegerRule | ChoiceRule | CustomRule;

/** One key's entry. `type` and `default` (docs text) may be left out when the rule spells them. */
export interface KeySpec {
  key: string;
  meaning: string;
  aliases?: readonly string[];
  rule?: KeyRule;
  type?: string;
  default?: string;
  /** NetConf fields this key fills; default: the field named like the key, when there is one. */
  fills?: readonly (keyof NetConf)[];
}

function boolean(): BooleanRule;
function boolean(value: boolean): Required<BooleanRule>;
function boolean(value?: boolean): BooleanRule {
  return value === undefined ? { kind: 'boolean' } : { kind: 'boolean', value };
}
function integer(min: number, max: number): IntegerRule;
function integer(min: number, max: number, value: number): Required<IntegerRule>;
function integer(min: number, max: number, value?: number): IntegerRule {
  return value === undefined ? { kind: 'integer', min, max } : { kind: 'integer', min, max, value };
}
function choice<T extends string>(
  choices: readonly T[],
  value: T,
): { kind: 'choice'; choices: readonly T[]; value: T } {
  return { kind: 'choice', choices, value };
}
const custom = <T>(value: T): CustomRule<T> => ({ kind: 'custom', value });

export const MODES: readonly Mode[] = ['bridge', 'delegatedNic'];
export const NETWORK_TYPES: readonly BridgeNetworkType[] = ['L2Bridge', 'Overlay', 'NAT', 'L2Tunnel'];
export const ADOPT_PEERS: readonly AdoptPeer[] = ['azure'];

export const KEY_SPECS = [
  // The spec's own keys.
  {
    key: 'cniVersion',
    type: 'string',
    default: '"0.1.0"',
    meaning:
      'Spec version of the request and of the result: one of 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0 (exact match); absent means 0.1.0, as libcni reads it. 0.1.0 and 0.2.0 results have the legacy shape (ip4, ip6, dns). CHECK needs 0.4.0 or later, GC and STATUS 1.1.0.',
  },
  {
    key: 'name',
    type: 'string',
    default: 'required',
    meaning:
      'Network configuration name: a letter or digit, then letters, digits, "_", "." or "-"; at most 128 characters.',
  },
  { key: 'type', type: 'string', default: 'required', meaning: 'The plugin binary name (normally "hcn-cni").' },
  {
    key: 'capabilities',
    fills: [],
    type: 'object',
    default: 'none',
    meaning:
      'Capabilities the plugin accepts (portMappings, dns, mac). Tolerated on stdin because libcni leaves it there.',
  },
  {
    key: 'runtimeConfig',
    fills: [],
    type: 'object',
    default: 'none',
    meaning:
      'Set by the runtime from the capabilities: portMappings, dns, mac. Other capabilities are ignored with a warning.',
  },
  {
    key: 'runtimeConfig.portMappings',
    fills: ['portMappings'],
    type: 'list of {hostPort, containerPort, protocol, hostIP?}',
    default: '[]',
    meaning:
      'Host port publishing. Ports 1-65535; protocol tcp, udp or sctp (any case; default tcp); hostIP an optional IPv4 or IPv6 address. A mapping is made for each address family the pod has (the IPv6 one flagged NatFlagsIPv6); a hostIP limits it to its family, which the pod must have.',
  },
  {
    key: 'runtimeConfig.dns',
    fills: ['runtimeDns'],
    type: '{servers, searches, options}',
    default: 'none',
    meaning: 'DNS from the runtime; replaces the static dns servers and search list when present.',
  },
  {
    key: 'runtimeConfig.mac',
    fills: ['runtimeMac'],
    type: 'string',
    default: 'none',
    meaning: 'MAC for the pod interface: colon, dash or bare hex; unicast only. Normalised to AA-BB-CC-DD-EE-FF.',
  },
  {
    key: 'args',
    fills: [],
    type: 'object',
    default: 'none',
    meaning: 'Reserved for the runtime (e.g. args.cni); passed through untouched.',
  },
  {
    key: 'prevResult',
    type: 'result object',
    default: 'none',
    meaning:
      "The previous result (DEL, CHECK; ADD in a chain), in any supported version's shape. In an ADD without ipam, its IPv4 addresses, routes and dns are the pod's (chained after an IPAM-like plugin); with ipam as well it is error 7.",
  },
  {
    key: 'ipam',
    type: 'object',
    default: 'none (HNS assigns addresses)',
    meaning:
      "Delegated IPAM. ipam.type is an executable name (no path) looked up on CNI_PATH only; the whole configuration is passed to it on stdin. The endpoint's gateway is the IPAM's; win-bridge instead always uses the subnet's .2 with ipam (containernetworking/plugins plugins/main/windows/win-bridge/win-bridge_windows.go): set host-local's gateway to .2 for the same.",
  },
  {
    key: 'dns',
    type: '{nameservers, domain, search, options}',
    default: 'none',
    meaning: 'Static DNS for the pod (keys in any case: Nameservers, Search, ...).',
  },
  {
    key: 'ipMasq',
    rule: boolean(false),
    meaning:
      "win-overlay's meaning: true adds the network's subnet as an OutBoundNAT exception (traffic inside the pod network is not source-NATed).",
  },
  {
    key: 'delegate',
    fills: ['effective'],
    type: 'object',
    default: 'none',
    meaning:
      "A flannel-style wrapper: its keys are read as top-level keys (its type is ignored); a key set both here and at the top level with different values is error 7. flannel's subnet lease is not read: without ipam, HNS assigns addresses.",
  },

  // Windows and HNS settings.
  {
    key: 'mode',
    rule: choice(MODES, 'bridge'),
    meaning: 'bridge: attach to an HNS network (networkName). delegatedNic: give the pod a host NIC found by its MAC.',
  },
  {
    key: 'apiVersion',
    rule: custom<ApiVersionSetting>('auto'),
    type: '"auto" | 1 | 2',
    meaning: 'HNS API: 1 (v1 HNS), 2 (HCN v2), or auto (v2 when the host has it). "1" and "2" as strings are accepted.',
  },
  {
    key: 'networkName',
    type: 'string',
    default: 'the value of name',
    meaning:
      'Name of the HNS network to attach to in bridge mode: 1-256 characters, no control characters, lone surrogates, "/" or "\\", no leading or trailing spaces, not only dots.',
  },
  {
    key: 'networkType',
    rule: choice(NETWORK_TYPES, 'L2Bridge'),
    fills: ['networkType', 'networkTypeSet'],
    default: '"L2Bridge" for a network hcn-cni creates; the type of an existing network',
    meaning:
      'Type of the network when it is created, and, when set, the type an existing one must have (any case; another type is error 7, as win-bridge and win-overlay refuse it). Omitted, an existing network of any of these types is used as it is (a win-overlay configuration with only "type" changed attaches to its Overlay network).',
  },
  {
    key: 'createNetwork',
    rule: boolean(false),
    fills: ['createNetwork', 'createNetworkFromMaster'],
    default: 'false; true when master and a subnet are set (sdnbridge creates its network)',
    meaning: 'Create the bridge-mode network when it does not exist. Requires subnet.',
  },
  {
    key: 'subnet',
    fills: ['subnets'],
    type: 'IPv4 or IPv6 CIDR, or a list of one per family',
    default: 'none',
    meaning:
      'Subnet(s) of a network the plugin creates (createNetwork, or delegatedNic without IPAM): an IPv6 one, or one of each family, makes IPv6-only or dual-stack pods. Must be a network address; prefix /1 to /30 (IPv4), /1 to /126 (IPv6). IPv6 needs HCN (v2) and HNS 11.10 or later.',
    aliases: ['ipam.subnet (sdnbridge; an IPv4 network address, when no IPv4 subnet is given)'],
  },
  {
    key: 'gateway',
    fills: ['subnets'],
    type: 'IPv4 or IPv6 address, or a list of one per family',
    default: 'the first address of each subnet, when the plugin creates the network',
    meaning:
      'Default gateway per family (a default route 0.0.0.0/0 or ::/0 each); must lie inside the subnet of its family when subnet is set.',
    aliases: ['ipam.routes[0].GW (sdnbridge, with ipam.subnet)'],
  },
  {
    key: 'adapterName',
    type: 'string',
    default: 'none',
    meaning: 'Host adapter a created bridge-mode network binds to.',
    aliases: ['master'],
  },
  {
    key: 'master',
    fills: ['adapterName', 'createNetwork'],
    type: 'string',
    default: 'none',
    meaning:
      "sdnbridge's name for adapterName; with a subnet (or ipam.subnet) it also turns createNetwork on, and a network it creates needs networkType.",
  },
  {
    key: 'endpointMacPrefix',
    rule: custom('0E-2A'),
    type: '"xx-xx"',
    meaning:
      "win-overlay: on an Overlay network with IPAM the endpoint MAC is the prefix followed by the four bytes of the pod's IPv4 address (0E-2A-0A-84-00-05).",
  },
  {
    key: 'iov',
    rule: boolean(false),
    meaning:
      'delegatedNic: SR-IOV (Accelnet) for the pod NIC, as Azure CNI does for FrontendNIC: network flag EnableIov and an Iov endpoint policy. Needs HCN (v2) and HNS 15.4 or later.',
  },
  {
    key: 'disableHostPort',
    rule: boolean(),
    default: 'true where HNS is 15.1 or later',
    meaning:
      "delegatedNic: no host vNIC (vEthernet) on the pod NIC's switch (network flag DisableHostPort, as Azure CNI sets it). true on an older HNS is error 2; false keeps the host vNIC.",
  },
  {
    key: 'mtu',
    rule: integer(576, 9000),
    default: 'none (HNS default)',
    meaning:
      'Interface MTU (InterfaceParameters policy, HCN only, HNS 10.0 or later; elsewhere not applied and logged); reported in 1.1.0 results.',
  },
  {
    key: 'loopbackDSR',
    rule: boolean(false),
    meaning:
      'Let a pod reach itself through a service VIP (OutBoundNAT with the pod IP as destination; added after create when HNS assigns the address). For the IPv4 address only, as in every peer. Needs HCN and DSR (HNS 9.3-9.x or 10.2 or later): error 2 otherwise.',
    aliases: ['windowsSettings.enableLoopbackDSR', 'optionalFlags.loopbackDSR'],
  },
  {
    key: 'outboundNatExceptions',
    type: 'list of IPv4 or IPv6 CIDRs',
    default: '[]',
    meaning:
      "Destinations that are not source-NATed: one OutBoundNAT policy per family the pod has, each with that family's exceptions. Network addresses: host bits zero (10.0.0.0/8, not 10.0.0.1/8).",
    aliases: ['ipMasqNetwork (one CIDR, added to the list)'],
  },
  {
    key: 'ipMasqNetwork',
    fills: ['outboundNatExceptions'],
    type: 'IPv4 or IPv6 CIDR',
    default: 'none',
    meaning: "win-bridge's single NAT exception (a network address); added to outboundNatExceptions.",
  },
  {
    key: 'AdditionalArgs',
    fills: ['endpointPolicies', 'networkPolicies'],
    type: 'list of {Name, Value}',
    default: '[]',
    meaning:
      'Azure CNI / sdnbridge policies: Name "EndpointPolicy" or "NetworkPolicy", Value an HNS policy object with a Type. Other names are ignored with a warning.',
  },
  {
    key: 'policies',
    fills: ['endpointPolicies', 'networkPolicies'],
    type: 'list of {name, value}',
    default: '[]',
    meaning: 'win-bridge policies, same meaning as AdditionalArgs.',
  },
  {
    key: 'windowsSettings',
    fills: ['loopbackDSR', 'hnsTimeoutSeconds'],
    type: 'object',
    default: 'none',
    meaning:
      'Azure CNI settings: enableLoopbackDSR (= loopbackDSR) and hnsTimeoutDurationInSeconds (= hnsTimeoutSeconds). Other keys are ignored with a warning.',
  },
  {
    key: 'optionalFlags',
    fills: ['loopbackDSR'],
    type: 'object',
    default: 'none',
    meaning: 'sdnbridge flags: loopbackDSR (= loopbackDSR) is honoured; the others are ignored with a warning.',
  },
  {
    key: 'hnsTimeoutSeconds',
    rule: integer(1, 3600, 30),
    meaning: 'Limit for each HNS call; on expiry the verb fails with code 11 (try again later).',
    aliases: ['windowsSettings.hnsTimeoutDurationInSeconds'],
  },
  {
    key: 'ipamTimeoutSeconds',
    rule: integer(1, 3600, 30),
    meaning: 'Limit for each delegated IPAM run; on expiry the IPAM is killed and the verb fails with code 11.',
  },

  // The plugin's own housekeeping.
  {
    key: 'stateDir',
    type: 'absolute path',
    default: 'C:\\ProgramData\\hcn-cni\\state on Windows, /var/lib/hcn-cni on Linux',
    meaning:
      "Where attachment records, intents, tombstones and the lock live. Anything at a record's path that is not a small regular file (a directory, FIFO, symlink) is quarantined, never followed or read.",
  },
  {
    key: 'logFile',
    type: 'absolute path',
    default: 'none (stderr only)',
    meaning:
      'JSON-lines log file, in addition to stderr. Best effort: a file that cannot be opened or written (full, a directory, a device, a symlink, which is never followed) costs a warning on stderr, never the verb. Created with mode 0640.',
  },
  {
    key: 'logLevel',
    rule: choice(LOG_LEVELS, 'info'),
    meaning: 'Log verbosity (any case).',
  },
  {
    key: 'audit',
    rule: boolean(true),
    meaning:
      "Run the leak audit (ownerless HNS objects): the whole node's every auditIntervalSeconds, and every ADD's audit of its own names and of what holds its NIC. false brings seed 000 back.",
  },
  {
    key: 'auditIntervalSeconds',
    rule: integer(0, 86400, 60),
    meaning:
      "How often the whole node is audited: by the resident service on a timer (and right after HNS answers again following a failure), and by the standalone executable's first ADD after the last audit is that old. 0: every ADD audits the whole node, in both modes (the cost of an ADD then grows with the node's pods); the service's timer then keeps 60.",
  },
  {
    key: 'repair',
    rule: boolean(false),
    meaning:
      "Service only (hcn-cni serve): after an HNS restart, re-create the recorded pods' endpoints (recorded id, addresses, MAC, policies) and re-attach them, one pod at a time, IPAM untouched. Verified only on the simulator. See docs/repair.md.",
  },
  {
    key: 'adopt',
    rule: custom<readonly AdoptPeer[]>([]),
    type: 'list of "azure"',
    default: '[] (none)',
    meaning:
      "Migrating from Azure CNI: DEL and GC also remove Azure's endpoint of the pod (<first 8 characters of the container id>-<ifname>, which another pod's id may share) when it is attached to nothing or to what the request names, and the audit removes Azure's delegated-NIC network azure-<mac> when no endpoint is on it. The endpoints of win-bridge, win-overlay, sdnbridge and sdnoverlay (<container id>_<name>) need no opt-in. See docs/migrating.md.",
  },

  // GC input.
  {
    key: 'cni.dev/valid-attachments',
    fills: ['validAttachments'],
    type: 'list of {containerID, ifname}',
    default: 'none valid',
    meaning:
      "GC: attachments that are still valid; everything else the plugin owns may be removed. null means an empty list; absent (libcni's GC without arguments) means none is valid, with a warning.",
    aliases: ['cni.dev/attachments (spec 1.1.0 tag spelling; read when valid-attachments is absent)'],
  },
  {
    key: 'cni.dev/attachments',
    type: 'list of {containerID, ifname}',
    default: 'none',
    meaning: 'Older spelling of cni.dev/valid-attachments.',
    fills: ['validAttachments'],
  },
] as const satisfies readonly KeySpec[];

/**
 * TOLERATED_KEYS: keys that may reach a plugin but mean nothing to it (network-list keys some tools copy into plugin
 * configurations). Any other key under "cni.dev/" is also tolerated: that prefix is reserved for the runtime.
 */
export const TOLERATED_KEYS: readonly string[] = ['cniVersions', 'disableCheck', 'disableGC', 'loadOnlyInlinedPlugins'];

type Spec = (typeof KEY_SPECS)[number];

/** The key names that have a rule of their own (readSetting in config-read.ts reads them by it). */
export type RuledKey = Extract<Spec, { rule: unknown }>['key'];
/** The rule of a key, as declared. */
export type RuleOf<K extends RuledKey> = Extract<Spec, { key: K }>['rule'];
/** The value a rule reads. */
export type ValueOf<R> = R extends BooleanRule
  ? boolean
  : R extends IntegerRule
    ? number
    : R extends ChoiceRule<infer T>
      ? T
      : R extends CustomRule<infer T>
        ? T
        : never;
type Defaulted = Extract<Spec, { rule: { value: unknown } }>;

/** ruleOf: the rule of a key. */
export function ruleOf<K extends RuledKey>(key: K): RuleOf<K> {
  return (KEY_SPECS as readonly KeySpec[]).find((k) => k.key === key)!.rule as RuleOf<K>;
}

/** DEFAULTS: the default of every key whose rule has one. */
export const DEFAULTS = Object.fromEntries(
  (KEY_SPECS as readonly KeySpec[]).flatMap((k) =>
    k.rule && 'value' in k.rule && k.rule.value !== undefined ? [[k.key, k.rule.value]] : [],
  ),
) as { readonly [K in Defaulted['key']]: ValueOf<RuleOf<K>> };

/** typeText: the docs' "type" cell of a rule. */
function typeText(rule: KeyRule | undefined): string | undefined {
  switch (rule?.kind) {
    case 'boolean':
      return 'boolean';
    case 'integer':
      return `integer ${rule.min}-${rule.max}`;
    case 'choice':
      return rule.choices.map((c) => JSON.stringify(c)).join(' | ');
    default:
      return undefined;
  }
}

/** defaultText: the docs' "default" cell of a rule ("none" when it has no default). */
function defaultText(rule: KeyRule | undefined): string | undefined {
  if (rule === undefined || !('value' in rule) || rule.value === undefined) return undefined;
  return rule.kind === 'choice' || rule.kind === 'custom' ? JSON.stringify(rule.value) : String(rule.value);
}

/** CONFIG_KEYS: the entries as the docs table shows them (type and default spelled from the rule when not given). */
export const CONFIG_KEYS: readonly ConfigKey[] = (KEY_SPECS as readonly KeySpec[]).map((k) => ({
  key: k.key,
  type: k.type ?? typeText(k.rule) ?? 'unspecified',
  default: k.default ?? defaultText(k.rule) ?? 'none',
  meaning: k.meaning,
  ...(k.aliases ? { aliases: k.aliases } : {}),
}));

/** TOP_LEVEL_KEYS: the top-level keys the parser interprets (lower-cased), derived from the entries. */
export const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set(
  CONFIG_KEYS.filter((k) => k.key.startsWith('cni.dev/') || !k.key.includes('.')).map((k) => k.key.toLowerCase()),
);
