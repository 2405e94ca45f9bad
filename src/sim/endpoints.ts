/**
 * The simulator's endpoints: HNS's rules for creating (addresses, MAC, port mappings, default routes), changing,
 * attaching and deleting them, and the indexes that keep a query by name, a create and a delete as cheap on a node of
 * thousands as on an empty one. Part of the object store (store.ts); every method validates before it changes
 * anything.
 */
import { HR } from '../hns/hresults';
import type { SimHost } from './control-types';
import { guidKey, sameGuid, type ApiFlavour } from './guid';
import { canonicalIp, formatIp, parseIp } from '../net/addr';
import { defaultRoute } from '../net/ipv4';
import { cidrContains, isNetworkOrBroadcast, parsePrefix, type Cidr } from './prefix';
import { enumValue, type Obj } from './json-doc';
import { allocateMac, macToInt } from './mac';
import {
  EndpointState,
  subnetGateway,
  type EndpointObj,
  type NamespaceObj,
  type NetworkObj,
  type Policy,
  type Subnet,
} from './model';
import { applyPolicyRequest, modifyRequest } from './modify-request';
import type { EndpointInput } from './parse-endpoint';
import { parsePolicies } from './policies';
import { fail } from './sim-error';
import { checkEndpointPolicies } from './version-gates';

const HCN_E_SUBNET_NOT_FOUND = 0x803b0005;

export class Endpoints {
  readonly map = new Map<string, EndpointObj>();
  /** Endpoints per network, built on first use and then kept up to date. */
  private byNetwork: Map<string, EndpointObj[]> | undefined;
  /**
   * Endpoints by name and MACs in use, kept up to date at every add and removal: a query by name and a create cost
   * the same on a node of thousands as on an empty one (the simulator's speed only; the answers are the same).
   */
  private readonly byName = new Map<string, EndpointObj[]>();
  private readonly macsInUse = new Map<number, number>();
  /** Per network, the addresses its endpoints hold (a create checks its address against them). */
  private readonly heldOn = new Map<string, Map<string, number>>();

  constructor(
    private readonly host: () => Pick<SimHost, 'version'>,
    /** The namespace an endpoint is in, if it still exists (a delete takes the endpoint out of it). */
    private readonly namespaceOf: (id: string) => NamespaceObj | undefined,
  ) {}

  get(id: string): EndpointObj {
    return this.map.get(guidKey(id)) ?? fail(HR.ENDPOINT_NOT_FOUND, id);
  }

  /** Endpoints of a network, from an index kept up to date at every add and removal (views ask per network). */
  endpointsOf(networkId: string): EndpointObj[] {
    if (!this.byNetwork) {
      this.byNetwork = new Map();
      for (const e of this.map.values()) {
        const k = guidKey(e.networkId);
        const list = this.byNetwork.get(k);
        if (list) list.push(e);
        else this.byNetwork.set(k, [e]);
      }
    }
    return this.byNetwork.get(guidKey(networkId)) ?? [];
  }

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

  /** Every endpoint gone (an HNS restart, a reset), and the indexes with them. */
  forget(): void {
    this.map.clear();
    this.byNetwork = undefined;
    this.byName.clear();
    this.macsInUse.clear();
    this.heldOn.clear();
  }

  /** A new endpoint on `network`: the store has refused an existing id and resolved the network (Store.createEndpoint). */
  create(id: string, input: EndpointInput, api: ApiFlavour, network: NetworkObj): EndpointObj {
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
    this.map.set(guidKey(id), endpoint);
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
    const others = [...this.map.values()]
      .filter((e) => e !== self)
      .flatMap((e) => e.policies.filter((p) => p.type === 'PortMapping' && p.settings.ExternalPort));
    const seen = new Set(others.map(key));
    for (const p of mine) {
      if (seen.has(key(p))) fail(HR.PORT_ALREADY_EXISTS, key(p));
      seen.add(key(p));
    }
  }

  delete(id: string): EndpointObj {
    const e = this.get(id);
    if (e.namespaceId) {
      const ns = this.namespaceOf(e.namespaceId);
      if (ns) ns.resources = ns.resources.filter((r) => !(r.type === 'Endpoint' && sameGuid(r.id, e.id)));
    }
    this.map.delete(guidKey(e.id));
    this.indexEndpoint(e, false);
    // Kept up to date rather than rebuilt, as at create: the next create would otherwise re-index every endpoint.
    const list = this.byNetwork?.get(guidKey(e.networkId));
    const at = list ? list.indexOf(e) : -1;
    if (at >= 0) list!.splice(at, 1);
    return e;
  }

  /** HcnModifyEndpoint: Policy requests. Port requests attach VMs' switch ports, which the simulator has none of. */
  modify(id: string, doc: Obj): void {
    const e = this.get(id);
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
  updateV1(id: string, doc: Obj): EndpointObj {
    const e = this.get(id);
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
    const e = this.get(id);
    const key = attachKey(body);
    if (e.sharedContainers.some((c) => c.toLowerCase() === key.toLowerCase())) fail(HR.ENDPOINT_ALREADY_ATTACHED, key);
    e.sharedContainers.push(key);
    e.state = EndpointState.Attached;
    e.version++;
    return e;
  }

  detach(id: string, body: Obj): EndpointObj {
    const e = this.get(id);
    const key = attachKey(body);
    const i = e.sharedContainers.findIndex((c) => c.toLowerCase() === key.toLowerCase());
    if (i < 0) fail(HR.ENDPOINT_NOT_ATTACHED, key);
    e.sharedContainers.splice(i, 1);
    e.state = e.sharedContainers.length > 0 ? EndpointState.Attached : EndpointState.Detached;
    e.version++;
    return e;
  }
}

function attachKey(body: Obj): string {
  const containerId = body.ContainerId ?? body.ContainerID;
  if (typeof containerId === 'string' && containerId !== '') return containerId;
  const systemType = enumValue(body.SystemType, ['Container', 'Host', 'VirtualMachine'] as const);
  if (!systemType || systemType === 'Container') return fail(HR.E_INVALIDARG, 'attach needs ContainerId or SystemType');
  return systemType;
}
