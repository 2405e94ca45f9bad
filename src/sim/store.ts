/**
 * The committed object store and HNS's rules for changing it. Every method either applies its whole effect or
 * throws a SimError before changing anything (validation first, then mutation), which is what lets the engine
 * commit a call atomically at the end of its latency. Ids arrive already resolved (case per API, see guid.ts).
 */
import { HR } from '../hns/hresults';
import type { SimAdapter, SimHost } from './control-types';
import { guidKey, newGuid, sameGuid, type ApiFlavour } from './guid';
import { canonicalIp, formatIp, formatIpv4, parseIp } from '../net/addr';
import { defaultRoute } from '../net/ipv4';
import { cidrContains, cidrsOverlap, isNetworkOrBroadcast, parsePrefix, type Cidr } from './prefix';
import { enumValue, objectOrJson, type Obj } from './json-doc';
import { DEFAULT_MAC_POOL, allocateMac, macToInt } from './mac';
import {
  ADAPTER_BOUND_TYPES,
  DEFAULT_SUBNET_TYPES,
  EndpointState,
  isPersistent,
  subnetGateway,
  type EndpointObj,
  type NamespaceObj,
  type NetworkObj,
  type ObjectKind,
  type Policy,
  type Subnet,
} from './model';
import type { EndpointInput } from './parse-endpoint';
import { REQUEST_TYPES, type NamespaceInput, type ResourceRequest } from './parse-namespace';
import { parseV2Dns, type NetworkInput, type SubnetInput } from './parse-network';
import { ComputeSystems } from './compute-systems';
import { parsePolicies, samePolicy } from './policies';
import { SdnObjects } from './sdn-objects';
import { fail } from './sim-error';
import { checkEndpointPolicies, checkNetworkFlags } from './version-gates';

const HCN_E_SUBNET_NOT_FOUND = 0x803b0005;
const HCN_E_POLICY_NOT_FOUND = 0x803b0008;
const HCN_E_POLICY_ALREADY_EXISTS = 0x803b0012;

/** What the store needs from the simulated host, read live so control changes apply to the next call. */
export type HostSource = () => Pick<SimHost, 'adapters' | 'deleteNetworkWithEndpoints' | 'version'>;

export class Store {
  readonly networks = new Map<string, NetworkObj>();
  readonly endpoints = new Map<string, EndpointObj>();
  readonly namespaces = new Map<string, NamespaceObj>();
  /** HCS compute systems (containers) for hot attach: compute-systems.ts. */
  readonly computeSystems = new ComputeSystems(this);
  /** Load balancers, SDN routes and v1 policy lists: sdn-objects.ts. */
  readonly sdn = new SdnObjects(
    () => this.host(),
    (id) => this.endpoint(id),
  );
  private nextCompartment = 2;
  /** v1 /accelnet/: the NNV management MAC list (op-table-v1.ts). */
  private accelnetMacs: string[] = [];

  constructor(private readonly host: HostSource) {}

  // ---- lookups -------------------------------------------------------------------------------------------

  network(id: string): NetworkObj {
    return this.networks.get(guidKey(id)) ?? fail(HR.NETWORK_NOT_FOUND, id);
  }

  endpoint(id: string): EndpointObj {
    return this.endpoints.get(guidKey(id)) ?? fail(HR.ENDPOINT_NOT_FOUND, id);
  }

  namespace(id: string): NamespaceObj {
    return this.namespaces.get(guidKey(id)) ?? fail(HR.ERROR_NOT_FOUND, id);
  }

  /** The objects of one kind, in creation order. */
  all(kind: ObjectKind): Array<NetworkObj | EndpointObj | NamespaceObj> {
    const map = kind === 'network' ? this.networks : kind === 'endpoint' ? this.endpoints : this.namespaces;
    return [...map.values()];
  }

  has(kind: ObjectKind, id: string): boolean {
    const map = kind === 'network' ? this.networks : kind === 'endpoint' ? this.endpoints : this.namespaces;
    return map.has(guidKey(id));
  }

  /** Endpoints of a network, from an index kept up to date at every add and removal (views ask per network). */
  endpointsOf(networkId: string): EndpointObj[] {
    if (!this.byNetwork) {
      this.byNetwork = new Map();
      for (const e of this.endpoints.values()) {
        const k = guidKey(e.networkId);
        const list = this.byNetwork.get(k);
        if (list) list.push(e);
        else this.byNetwork.set(k, [e]);
      }
    }
    return this.byNetwork.get(guidKey(networkId)) ?? [];
  }
  private byNetwork: Map<string, EndpointObj[]> | undefined;
  /**
   * Endpoints by name and MACs in use, kept up to date at every add and removal: a query by name and a create cost
   * the same on a node of thousands as on an empty one (the simulator's speed only; the answers are the same).
   */
  private readonly byName = new Map<string, EndpointObj[]>();
  private readonly macsInUse = new Map<number, number>();
  /** Per network, the addresses its endpoints hold (a create checks its address against them). */
  private readonly heldOn = new Map<string, Map<string, number>>();

  /** Whether an endpoint of the network holds the address (canonical spelling, as pickAddresses stores it). */
  private addressHeld(networkId: string, ip: string): boolean {
    return this.heldOn.get(guidKey(networkId))?.has(ip) ?? false;
  }

  /** The endpoints with this exact name (what a Name filter can match), in creation order. */
  endpointsNamed(name: string): EndpointObj[] {
    return this.byName.get(name) ?? [];
  }

  private indexEndpoint(e: EndpointObj, add: boolean): void {
    const list = this.byName.get(e.name) ?? [];
    if (add) this.byName.set(e.name, [...list, e]);
    else if (list.length <= 1) this.byName.delete(e.name);
    else
      this.byName.set(
        e.name,
        list.filter((x) => x !== e),
      );
    const net = guidKey(e.networkId);
    const held = this.heldOn.get(net) ?? new Map<string, number>();
    for (const ip of [e.ipAddress, e.ip6Address]) {
      if (!ip) continue;
      const k = (held.get(ip) ?? 0) + (add ? 1 : -1);
      if (k > 0) held.set(ip, k);
      else held.delete(ip);
    }
    if (held.size > 0) this.heldOn.set(net, held);
    else this.heldOn.delete(net);
    if (!e.macAddress) return;
    const mac = macToInt(e.macAddress);
    const n = (this.macsInUse.get(mac) ?? 0) + (add ? 1 : -1);
    if (n > 0) this.macsInUse.set(mac, n);
    else this.macsInUse.delete(mac);
  }

  private forgetEndpoints(): void {
    this.endpoints.clear();
    this.byNetwork = undefined;
    this.byName.clear();
    this.macsInUse.clear();
    this.heldOn.clear();
  }

  /** Adapter name → id of the network bound to it. */
  boundAdapters(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const n of this.networks.values()) if (n.adapter) out[n.adapter] = n.id;
    return out;
  }

  counts(): { networks: number; endpoints: number; namespaces: number } {
    return { networks: this.networks.size, endpoints: this.endpoints.size, namespaces: this.namespaces.size };
  }

  // ---- networks ------------------------------------------------------------------------------------------

  createNetwork(id: string, input: NetworkInput, api: ApiFlavour): NetworkObj {
    if (this.networks.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `network ${id}`);
    // A duplicate name is refused even when the clashing network is invisible to the caller's query (hcsshim#850).
    if (input.name && [...this.networks.values()].some((n) => n.name === input.name)) {
      fail(HR.NETWORK_ALREADY_EXISTS, input.name);
    }
    checkNetworkFlags(input.flags, this.host().version);
    const adapter = ADAPTER_BOUND_TYPES.has(input.type) ? this.pickAdapter(input.adapterName) : undefined;
    const subnets =
      input.subnets.length > 0 || !DEFAULT_SUBNET_TYPES.has(input.type) ? input.subnets : [this.defaultNatSubnet()];
    const network: NetworkObj = {
      id,
      createdBy: api,
      schemaVersion: input.schemaVersion,
      version: 1,
      name: input.name,
      type: input.type,
      flags: input.flags,
      policies: input.policies,
      ipamType: input.ipamType,
      subnets: subnets.map((s) => this.makeSubnet(s, DEFAULT_SUBNET_TYPES.has(input.type))),
      macPools: input.macPools.length > 0 ? input.macPools : [{ ...DEFAULT_MAC_POOL }],
      dns: input.dns,
      adapter: adapter?.Name,
      adapterMac: adapter?.MacAddress,
      managementIp: input.managementIp,
      layeredOn: newGuid('v1'),
      activityId: newGuid('v1'),
    };
    this.networks.set(guidKey(id), network);
    return network;
  }

  /**
   * The adapter a new vSwitch binds: the one asked for, else the first one no network holds. An unknown adapter and
   * one already bound both give HCN_E_ADAPTER_NOT_FOUND, HNS's real (and confusing) answer (microsoft/SDN#300).
   */
  private pickAdapter(requested: string | undefined): SimAdapter {
    const bound = new Set(Object.keys(this.boundAdapters()).map((a) => a.toLowerCase()));
    const adapters = this.host().adapters;
    if (requested) {
      const a = adapters.find((x) => x.Name.toLowerCase() === requested.toLowerCase());
      if (!a) return fail(HR.ADAPTER_NOT_FOUND, `no adapter named ${requested}`);
      if (bound.has(a.Name.toLowerCase())) return fail(HR.ADAPTER_NOT_FOUND, `adapter ${a.Name} is already bound`);
      return a;
    }
    return (
      adapters.find((x) => !bound.has(x.Name.toLowerCase())) ?? fail(HR.ADAPTER_NOT_FOUND, 'every adapter is bound')
    );
  }

  /**
   * HNS gives a NAT network without subnets a 172.x.y.0/20 of its own: public outputs show such nat networks
   * (172.27.160.0/20 in docker/for-win issue 4295's daemon log; an endpoint 172.27.148.101/20 via 172.27.144.1 in
   * microsoft/Windows-Containers issue 563). How HNS picks the range is not public; lowest free first is our choice.
   */
  private defaultNatSubnet(): SubnetInput {
    const taken = [...this.networks.values()].flatMap((n) => n.subnets.map((s) => parsePrefix(s.prefix)!));
    for (let second = 16; second < 32; second++) {
      for (let third = 0; third < 256; third += 16) {
        const cidr = parsePrefix(`172.${second}.${third}.0/20`)!;
        if (!taken.some((t) => cidrsOverlap(t, cidr))) return { prefix: cidr.text, routes: [], policies: [] };
      }
    }
    return fail(HR.INVALID_NETWORK, 'no free 172.16.0.0/12 range for a default subnet');
  }

  private makeSubnet(s: SubnetInput, defaultGateway: boolean): Subnet {
    const subnet: Subnet = { id: newGuid('v1'), prefix: s.prefix, routes: [...s.routes], policies: s.policies };
    const cidr = parsePrefix(s.prefix)!;
    // NAT/ICS subnets get a gateway on their first address when none is configured (sample H: 172.21.16.1).
    if (defaultGateway && cidr.family === 4 && !subnetGateway(subnet)) {
      subnet.routes.push({ nextHop: formatIpv4(cidr.first + 1), destinationPrefix: '0.0.0.0/0' });
    }
    return subnet;
  }

  deleteNetwork(id: string): NetworkObj {
    const n = this.network(id);
    const eps = [...this.endpointsOf(n.id)]; // a copy: each delete takes its endpoint out of the index
    if (eps.length > 0 && this.host().deleteNetworkWithEndpoints === 'refuse') {
      fail(HR.ENTITY_HAS_REFERENCES, `network ${n.id} has ${eps.length} endpoints`);
    }
    for (const e of eps) this.deleteEndpoint(e.id);
    this.networks.delete(guidKey(n.id));
    return n;
  }

  /**
   * HcnModifyNetwork: the resource types hcsshim names (microsoft/hcsshim hcn/hcnnetwork.go NetworkResourceType: Policy,
   * DNS, Extension); of them Policy and DNS Update are carried out, anything else is refused. Refusing a NetAdapterName
   * policy (the NIC is bound at create) is our assumption: no public source says how HNS answers it.
   */
  modifyNetwork(id: string, doc: Obj): void {
    const n = this.network(id);
    const { resourceType, request, settings } = modifyRequest(doc, ['Policy', 'DNS', 'Extension']);
    if (resourceType === 'Policy') {
      const policies = parsePolicies(settings.Policies, 'v2', 'network');
      if (policies.some((p) => p.type === 'NetAdapterName'))
        fail(HR.REQUEST_UNSUPPORTED, 'NetAdapterName cannot be modified');
      n.policies = applyPolicyRequest(n.policies, policies, request);
    } else if (resourceType === 'DNS' && request === 'Update') {
      n.dns = parseV2Dns(settings, HR.INVALID_NETWORK);
    } else {
      fail(HR.REQUEST_UNSUPPORTED, `network ${resourceType} ${request}`);
    }
    n.version++;
  }

  // ---- endpoints -----------------------------------------------------------------------------------------

  createEndpoint(id: string, input: EndpointInput, api: ApiFlavour, callNetworkId?: string): EndpointObj {
    if (this.endpoints.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `endpoint ${id}`);
    const network = callNetworkId
      ? this.network(callNetworkId)
      : input.networkId
        ? this.network(input.networkId)
        : input.networkName
          ? ([...this.networks.values()].find((n) => n.name === input.networkName) ??
            fail(HR.NETWORK_NOT_FOUND, input.networkName))
          : fail(HR.INVALID_ENDPOINT, 'endpoint names no network');
    const picked = this.pickAddresses(network, input, api);
    const mac =
      input.macAddress ??
      allocateMac(network.macPools, (n) => this.macsInUse.has(n)) ??
      fail(HR.E_FAIL, 'MAC pool exhausted');
    checkEndpointPolicies(input.policies, this.host().version);
    this.checkPortMappings(input.policies, undefined);
    // An endpoint that names no routes gets a default route per family via its subnet's gateway, as HNS fills
    // GatewayAddress (and sdnbridge writes 0.0.0.0/0 and ::/0, microsoft/windows-container-networking network/endpoint.go).
    const defaults = picked.flatMap((p) => {
      const gw = subnetGateway(p.subnet);
      return gw ? [{ nextHop: gw, destinationPrefix: defaultRoute(p.family) }] : [];
    });
    const v4 = picked.find((p) => p.family === 4);
    const v6 = picked.find((p) => p.family === 6);
    const endpoint: EndpointObj = {
      id,
      createdBy: api,
      schemaVersion: input.schemaVersion,
      version: 1,
      name: input.name,
      networkId: network.id,
      ipAddress: v4?.ip,
      prefixLength: v4 ? (input.prefixLength ?? parsePrefix(v4.subnet.prefix)!.bits) : undefined,
      ...(v6
        ? { ip6Address: v6.ip, ip6PrefixLength: input.ip6PrefixLength ?? parsePrefix(v6.subnet.prefix)!.bits }
        : {}),
      macAddress: mac,
      policies: input.policies,
      dns: input.dns,
      // An endpoint that names no routes gets its subnet's gateway as default route, as HNS fills GatewayAddress.
      routes: input.routes.length > 0 ? input.routes : defaults,
      flags: input.flags,
      sharedContainers: [],
      state: EndpointState.Created,
    };
    this.endpoints.set(guidKey(id), endpoint);
    this.indexEndpoint(endpoint, true);
    // Kept up to date rather than rebuilt: a create on a node of thousands would otherwise re-index them all.
    const list = this.byNetwork?.get(guidKey(network.id));
    if (list) list.push(endpoint);
    else if (this.byNetwork) this.byNetwork.set(guidKey(network.id), [endpoint]);
    return endpoint;
  }

  /**
   * The endpoint's addresses, one per family. Asked for: inside a subnet of its family, else HCN_E_INVALID_IP; not
   * reserved or held, else HCN_E_ADDR_INVALID_OR_RESERVED (docker/for-win#13965). Asked for none: per family, the first
   * free address of the family's subnets in order (IPv6 as IPv4, moby/moby pull 48285), skipping network, gateway and
   * broadcast addresses; networks without subnets (Transparent, Private) give none.
   * A v2 endpoint on a network whose subnets are all IPv6 gets an IPv6 address only. Microsoft says HNS has no
   * IPv6-only support (microsoft/Windows-Containers issue 522), so this is our choice, unverified (README "IPv6").
   * v1 has one address field, IPAddress, for IPv4 (its IPv6 address has fields of its own, microsoft/hcsshim
   * internal/hns/hnsendpoint.go, which the simulator shows but does not accept at create): an IPv6 literal there is
   * HCN_E_INVALID_IP (our assumption; HNS's answer is not public), and a v1 endpoint on a network whose only subnets
   * are IPv6 fails as HNS answered hcsshim v1 for an IPv6 l2bridge network, "The network does not have a subnet for
   * this endpoint." (HCN_E_SUBNET_NOT_FOUND, microsoft/Windows-Containers issue 82).
   */
  private pickAddresses(
    network: NetworkObj,
    input: EndpointInput,
    api: ApiFlavour,
  ): Array<{ family: 4 | 6; ip: string; subnet: Subnet }> {
    const all = network.subnets.map((s) => ({ s, c: parsePrefix(s.prefix)! }));
    // Held addresses are stored canonical (pickAddresses returns canonicalIp).
    const reserved = (c: Cidr, s: Subnet, ip: string) =>
      isNetworkOrBroadcast(c, ip) ||
      canonicalIp(subnetGateway(s) ?? '') === canonicalIp(ip) ||
      this.addressHeld(network.id, canonicalIp(ip));
    const requested = [input.ipAddress, input.ip6Address].filter((x): x is string => x !== undefined);
    if (api === 'v1' && input.ipAddress && parseIp(input.ipAddress)?.family === 6) {
      return fail(HR.INVALID_IP, `${input.ipAddress}: v1 IPAddress holds an IPv4 address`);
    }
    if (requested.length > 0) {
      return requested.map((ip) => {
        const hit = all.find((x) => cidrContains(x.c, ip));
        if (!hit) return fail(HR.INVALID_IP, `${ip} is in no subnet of ${network.id}`);
        if (reserved(hit.c, hit.s, ip)) return fail(HR.ADDR_INVALID_OR_RESERVED, `${ip} is reserved or held`);
        return { family: hit.c.family, ip: canonicalIp(ip), subnet: hit.s };
      });
    }
    const families: Array<4 | 6> = api === 'v1' ? [4] : [4, 6];
    if (api === 'v1' && all.length > 0 && all.every((x) => x.c.family === 6)) {
      return fail(
        HCN_E_SUBNET_NOT_FOUND,
        `network ${network.id} has only IPv6 subnets, and a v1 endpoint takes an IPv4 address`,
      );
    }
    const out: Array<{ family: 4 | 6; ip: string; subnet: Subnet }> = [];
    for (const family of families) {
      const subnets = all.filter((x) => x.c.family === family);
      if (subnets.length === 0) continue;
      const found = this.firstFree(subnets, reserved);
      if (!found) return fail(HCN_E_SUBNET_NOT_FOUND, `no free IPv${family} address in ${network.id}`);
      out.push({ family, ...found });
    }
    return out;
  }

  /**
   * The first free address of the subnets (IPv6 ranges are searched from the bottom, at most 65536 addresses each: a
   * bound of the simulator's, not HNS's).
   */
  private firstFree(
    subnets: Array<{ s: Subnet; c: Cidr }>,
    reserved: (c: Cidr, s: Subnet, ip: string) => boolean,
  ): { ip: string; subnet: Subnet } | undefined {
    for (const { s, c } of subnets) {
      const end = c.family === 4 ? c.hi : c.lo + 65535n < c.hi ? c.lo + 65535n : c.hi;
      for (let n = c.lo; n <= end; n++) {
        const ip = formatIp(c.family, n);
        if (!reserved(c, s, ip)) return { ip, subnet: s };
      }
    }
    return undefined;
  }

  /**
   * A host port can be mapped once per protocol and VIP (HCN_E_PORT_ALREADY_EXISTS, microsoft/hcsshim
   * hcn/hcnerrors_test.go TestEndpointAlreadyExistsError).
   */
  private checkPortMappings(policies: Policy[], self: EndpointObj | undefined): void {
    // The IPv6 mapping of a port is another mapping (NatFlagsIPv6, microsoft/hcsshim hcn/hcnpolicy.go): Azure CNI adds
    // one for IPv4 and one for IPv6 of the same host port (Azure/azure-container-networking
    // cni/network/network_windows.go getPoliciesFromRuntimeCfg).
    const family = (p: Policy) => ((Number(p.settings.Flags ?? 0) & 2) !== 0 ? 6 : 4);
    const key = (p: Policy) =>
      `${String(p.settings.Protocol ?? 6)}/${String(p.settings.ExternalPort)}/${String(p.settings.VIP ?? '')}/v${family(p)}`;
    const mine = policies.filter((p) => p.type === 'PortMapping' && p.settings.ExternalPort);
    if (mine.length === 0) return; // nothing to collide (and no scan of every endpoint's policies)
    const others = [...this.endpoints.values()]
      .filter((e) => e !== self)
      .flatMap((e) => e.policies.filter((p) => p.type === 'PortMapping' && p.settings.ExternalPort));
    const seen = new Set(others.map(key));
    for (const p of mine) {
      if (seen.has(key(p))) fail(HR.PORT_ALREADY_EXISTS, key(p));
      seen.add(key(p));
    }
  }

  deleteEndpoint(id: string): EndpointObj {
    const e = this.endpoint(id);
    if (e.namespaceId) {
      const ns = this.namespaces.get(guidKey(e.namespaceId));
      if (ns) ns.resources = ns.resources.filter((r) => !(r.type === 'Endpoint' && sameGuid(r.id, e.id)));
    }
    this.endpoints.delete(guidKey(e.id));
    this.indexEndpoint(e, false);
    // Kept up to date rather than rebuilt, as at create: the next create would otherwise re-index every endpoint.
    const list = this.byNetwork?.get(guidKey(e.networkId));
    const at = list ? list.indexOf(e) : -1;
    if (at >= 0) list!.splice(at, 1);
    return e;
  }

  /** HcnModifyEndpoint: Policy requests. Port requests attach VMs' switch ports, which the simulator has none of. */
  modifyEndpoint(id: string, doc: Obj): void {
    const e = this.endpoint(id);
    const { resourceType, request, settings } = modifyRequest(doc, ['Port', 'Policy']);
    if (resourceType !== 'Policy') fail(HR.REQUEST_UNSUPPORTED, `endpoint ${resourceType} ${request}`);
    const given = parsePolicies(settings.Policies, 'v2', 'endpoint');
    checkEndpointPolicies(given, this.host().version);
    const policies = applyPolicyRequest(e.policies, given, request);
    this.checkPortMappings(policies, e);
    e.policies = policies;
    e.version++;
  }

  /** v1 POST /endpoints/{id}: the caller sends the endpoint back with its new policy list (hnslib ApplyACLPolicy). */
  updateEndpointV1(id: string, doc: Obj): EndpointObj {
    const e = this.endpoint(id);
    if (doc.Policies !== undefined) {
      const policies = parsePolicies(doc.Policies, 'v1', 'endpoint');
      checkEndpointPolicies(policies, this.host().version);
      this.checkPortMappings(policies, e);
      e.policies = policies;
    }
    e.version++;
    return e;
  }

  /** v1 attach: {"ContainerId":…,"SystemType":"Container"|"Host"|"VirtualMachine"}. */
  attach(id: string, body: Obj): EndpointObj {
    const e = this.endpoint(id);
    const key = attachKey(body);
    if (e.sharedContainers.some((c) => c.toLowerCase() === key.toLowerCase())) fail(HR.ENDPOINT_ALREADY_ATTACHED, key);
    e.sharedContainers.push(key);
    e.state = EndpointState.Attached;
    e.version++;
    return e;
  }

  detach(id: string, body: Obj): EndpointObj {
    const e = this.endpoint(id);
    const key = attachKey(body);
    const i = e.sharedContainers.findIndex((c) => c.toLowerCase() === key.toLowerCase());
    if (i < 0) fail(HR.ENDPOINT_NOT_ATTACHED, key);
    e.sharedContainers.splice(i, 1);
    e.state = e.sharedContainers.length > 0 ? EndpointState.Attached : EndpointState.Detached;
    e.version++;
    return e;
  }

  // ---- namespaces ----------------------------------------------------------------------------------------

  createNamespace(id: string, input: NamespaceInput, api: ApiFlavour): NamespaceObj {
    if (this.namespaces.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `namespace ${id}`);
    const namespaceId = input.namespaceId ?? this.nextCompartment;
    this.nextCompartment = Math.max(this.nextCompartment, namespaceId + 1);
    const ns: NamespaceObj = {
      id,
      createdBy: api,
      schemaVersion: input.schemaVersion,
      version: 1,
      type: input.type,
      namespaceId,
      resources: [],
    };
    this.namespaces.set(guidKey(id), ns);
    return ns;
  }

  /** Deleting a namespace releases its endpoints (hcsoci removes them first; HNS does not insist). */
  deleteNamespace(id: string): NamespaceObj {
    const ns = this.namespace(id);
    for (const e of this.endpoints.values())
      if (e.namespaceId && sameGuid(e.namespaceId, ns.id)) e.namespaceId = undefined;
    this.namespaces.delete(guidKey(ns.id));
    return ns;
  }

  /** Add/remove an endpoint (or container) to/from a namespace: HcnModifyNamespace and v1 add/removeresource. */
  namespaceResource(nsId: string, req: ResourceRequest): NamespaceObj {
    const ns = this.namespace(nsId);
    const { type, id } = req.resource;
    if (type === 'Endpoint') {
      const e = this.endpoint(id);
      if (req.request === 'Add') {
        if (e.namespaceId) fail(HR.ENDPOINT_NAMESPACE_ALREADY_EXISTS, `${e.id} is in namespace ${e.namespaceId}`);
        e.namespaceId = ns.id;
        ns.resources.push({ type, id: e.id });
      } else {
        if (!e.namespaceId || !sameGuid(e.namespaceId, ns.id))
          fail(HR.ENDPOINT_NOT_ATTACHED, `${e.id} is not in ${ns.id}`);
        e.namespaceId = undefined;
        ns.resources = ns.resources.filter((r) => !(r.type === 'Endpoint' && sameGuid(r.id, e.id)));
      }
      e.version++;
    } else if (req.request === 'Add') {
      if (!ns.resources.some((r) => r.type === 'Container' && r.id.toLowerCase() === id.toLowerCase()))
        ns.resources.push({ type, id });
    } else {
      const before = ns.resources.length;
      ns.resources = ns.resources.filter((r) => !(r.type === 'Container' && r.id.toLowerCase() === id.toLowerCase()));
      if (ns.resources.length === before) fail(HR.ERROR_NOT_FOUND, `container ${id}`);
    }
    ns.version++;
    return ns;
  }

  setAccelnetMacs(macs: string[]): void {
    this.accelnetMacs = [...macs];
  }

  /** hcsshim's HNSNnvManagementMacList: MacAddressList omitted when empty (its omitempty tag). */
  accelnetMacList(): Obj {
    return this.accelnetMacs.length > 0 ? { MacAddressList: this.accelnetMacs.map((m) => ({ MacAddress: m })) } : {};
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /**
   * What an HNS restart leaves. Sources, and what none of them says:
   *  - Endpoints vanish: "the pod still running and hold that IP, but hnsendpoints has been removed and is not
   *    automatically re-create" (docker/for-win#12425, Windows Server 2022; the same report as projectcalico/calico#5164,
   *    where felix then logs "Failed to look up one or more HNS endpoints").
   *  - Non-persistent networks (flag 8) vanish and persistent ones stay: the flag is what Azure CNI sets so a reboot
   *    clears its networks (Azure/azure-container-networking network/network_windows.go hcn.EnableNonPersistent);
   *    HNS's networks are what it reloads from its store (Azure/azure-container-networking#283).
   *  - Newer HNS builds rehydrate: "After HNS restarted, the LoadBalancers were restored through the HNS
   *    backup/restore (rehydration) mechanism" (kubernetes/kubernetes#139519), and Azure's CI restarts HNS and then
   *    expects every pod IP to have its endpoint ("restarting HNS again to make sure Endpoints rehydrate correctly",
   *    Azure/azure-container-networking test/capz/npm/npm-e2e.sh; .pipelines/cni/load-test-templates/
   *    restart-hns-template.yaml). That build's behaviour is not modelled: there, nothing is missing to repair.
   *  - HCN namespaces: no public source says whether a restart drops them. The reports above name only endpoints, and
   *    the compartment behind a namespace holds the running pod (microsoft/Windows-Containers#401: HNS creates it when
   *    the container starts in the namespace), so they are kept by default; `dropNamespaces` drops all of them (true)
   *    or the listed ones, for the other possibility (then the pods in them cannot be re-attached).
   */
  restart(options: { dropNamespaces?: boolean | readonly string[]; rehydrate?: boolean } = {}): void {
    if (options.rehydrate) return this.rehydrate();
    this.forgetEndpoints();
    const drop = options.dropNamespaces;
    if (drop === true) this.namespaces.clear();
    else if (Array.isArray(drop)) for (const id of drop as readonly string[]) this.namespaces.delete(guidKey(id));
    // A kept namespace no longer lists the endpoints it had: they are gone (its containers stay).
    for (const ns of this.namespaces.values()) ns.resources = ns.resources.filter((r) => r.type !== 'Endpoint');
    for (const [k, n] of this.networks) if (!isPersistent(n)) this.networks.delete(k);
    this.computeSystems.forgetEndpoints();
    // SDN objects (load balancers, policy lists, routes) go too: "HNS service may crash and HNS policies will be purged
    // after it is restarted", which is why AKS restarts kube-proxy when HNS's process id changes (Azure/AgentBaker
    // staging/cse/windows/provisioningscripts/hnsremediator.ps1). On the builds that rehydrate they are restored, as
    // endpoints are (kubernetes/kubernetes#139519, above): not modelled. No source names v2 routes by themselves.
    this.sdn.clear();
  }

  /**
   * `restart --rehydrate`: a build that restores its endpoints after a restart (kubernetes/kubernetes#139519, above)
   * and still loses their policies — "a HNS crash purges DNS policy on the node" (Azure/aks-engine pull 4975, whose
   * hnsremediator restarts kube-proxy to program them again). Which policies go is not said; all of them go here.
   */
  private rehydrate(): void {
    for (const e of this.endpoints.values()) {
      e.policies = [];
      e.version++;
    }
    this.sdn.clear();
  }

  clear(): void {
    this.networks.clear();
    this.forgetEndpoints();
    this.namespaces.clear();
    this.computeSystems.clear();
    this.sdn.clear();
    this.accelnetMacs = [];
    this.nextCompartment = 2;
  }

  persistentNetworks(): NetworkObj[] {
    return [...this.networks.values()].filter(isPersistent);
  }

  load(networks: NetworkObj[]): void {
    for (const n of networks) this.networks.set(guidKey(n.id), n);
  }
}

function attachKey(body: Obj): string {
  const containerId = body.ContainerId ?? body.ContainerID;
  if (typeof containerId === 'string' && containerId !== '') return containerId;
  const systemType = enumValue(body.SystemType, ['Container', 'Host', 'VirtualMachine'] as const);
  if (!systemType || systemType === 'Container') return fail(HR.E_INVALIDARG, 'attach needs ContainerId or SystemType');
  return systemType;
}

interface ModifyRequest {
  resourceType: string;
  request: (typeof REQUEST_TYPES)[number];
  settings: Obj;
}

function modifyRequest(doc: Obj, resourceTypes: readonly string[]): ModifyRequest {
  const resourceType = enumValue(doc.ResourceType, resourceTypes);
  const request = enumValue(doc.RequestType, REQUEST_TYPES);
  if (!resourceType || !request)
    return fail(HR.REQUEST_UNSUPPORTED, `${String(doc.ResourceType)}/${String(doc.RequestType)}`);
  return { resourceType, request, settings: objectOrJson(doc.Settings ?? {}, HR.INVALID_JSON, 'Settings') };
}

/** Add appends (an identical policy is HCN_E_POLICY_ALREADY_EXISTS), Remove drops (a missing one is
 *  HCN_E_POLICY_NOT_FOUND; empty Settings match by type), Update replaces every policy of the given types. */
function applyPolicyRequest(current: Policy[], given: Policy[], request: string): Policy[] {
  if (request === 'Add') {
    for (const p of given) if (current.some((c) => samePolicy(c, p))) fail(HCN_E_POLICY_ALREADY_EXISTS, p.type);
    return [...current, ...given];
  }
  if (request === 'Remove') {
    let out = [...current];
    for (const p of given) {
      const byType = Object.keys(p.settings).length === 0;
      const i = out.findIndex((c) => (byType ? c.type === p.type : samePolicy(c, p)));
      if (i < 0) fail(HCN_E_POLICY_NOT_FOUND, p.type);
      out = byType ? out.filter((c) => c.type !== p.type) : out.filter((_, j) => j !== i);
    }
    return out;
  }
  if (request === 'Update') {
    const types = new Set(given.map((p) => p.type));
    return [...current.filter((c) => !types.has(c.type)), ...given];
  }
  return fail(HR.REQUEST_UNSUPPORTED, `policy ${request}`);
}
