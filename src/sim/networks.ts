/**
 * The simulator's networks: HNS's rules for creating them (a unique name, the adapter a vSwitch binds, a NAT
 * network's default subnet and gateway), changing and deleting them. Part of the object store (store.ts); every method
 * validates before it changes anything.
 */
import { HR } from '../hns/hresults';
import type { SimAdapter, SimHost } from './control-types';
import { guidKey, newGuid, type ApiFlavour } from './guid';
import { formatIpv4 } from '../net/addr';
import { cidrsOverlap, parsePrefix } from './prefix';
import type { Obj } from './json-doc';
import { DEFAULT_MAC_POOL } from './mac';
import {
  ADAPTER_BOUND_TYPES,
  DEFAULT_SUBNET_TYPES,
  isPersistent,
  subnetGateway,
  type EndpointObj,
  type NetworkObj,
  type Subnet,
} from './model';
import { applyPolicyRequest, modifyRequest } from './modify-request';
import { parseV2Dns, type NetworkInput, type SubnetInput } from './parse-network';
import { parsePolicies } from './policies';
import { fail } from './sim-error';
import { checkNetworkFlags } from './version-gates';

/** What the store needs from the simulated host, read live so control changes apply to the next call. */
export type HostSource = () => Pick<SimHost, 'adapters' | 'deleteNetworkWithEndpoints' | 'version'>;

/** What deleting a network does to its endpoints (the store's). */
export interface NetworkEndpoints {
  endpointsOf(networkId: string): EndpointObj[];
  deleteEndpoint(id: string): EndpointObj;
}

export class Networks {
  readonly map = new Map<string, NetworkObj>();

  constructor(
    private readonly host: HostSource,
    private readonly endpoints: NetworkEndpoints,
  ) {}

  get(id: string): NetworkObj {
    return this.map.get(guidKey(id)) ?? fail(HR.NETWORK_NOT_FOUND, id);
  }

  /** Adapter name → id of the network bound to it. */
  boundAdapters(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const n of this.map.values()) if (n.adapter) out[n.adapter] = n.id;
    return out;
  }

  create(id: string, input: NetworkInput, api: ApiFlavour): NetworkObj {
    if (this.map.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `network ${id}`);
    // A duplicate name is refused even when the clashing network is invisible to the caller's query (hcsshim#850).
    if (input.name && [...this.map.values()].some((n) => n.name === input.name)) {
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
    this.map.set(guidKey(id), network);
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
    const taken = [...this.map.values()].flatMap((n) => n.subnets.map((s) => parsePrefix(s.prefix)!));
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

  delete(id: string): NetworkObj {
    const n = this.get(id);
    const eps = [...this.endpoints.endpointsOf(n.id)]; // a copy: each delete takes its endpoint out of the index
    if (eps.length > 0 && this.host().deleteNetworkWithEndpoints === 'refuse') {
      fail(HR.ENTITY_HAS_REFERENCES, `network ${n.id} has ${eps.length} endpoints`);
    }
    for (const e of eps) this.endpoints.deleteEndpoint(e.id);
    this.map.delete(guidKey(n.id));
    return n;
  }

  /**
   * HcnModifyNetwork: the resource types hcsshim names (microsoft/hcsshim hcn/hcnnetwork.go NetworkResourceType: Policy,
   * DNS, Extension); of them Policy and DNS Update are carried out, anything else is refused. Refusing a NetAdapterName
   * policy (the NIC is bound at create) is our assumption: no public source says how HNS answers it.
   */
  modify(id: string, doc: Obj): void {
    const n = this.get(id);
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

  /** The networks an HNS restart keeps (flag 8 not set), and that the state file holds. */
  persistent(): NetworkObj[] {
    return [...this.map.values()].filter(isPersistent);
  }

  /** An HNS restart: non-persistent networks vanish (the sources are at Store.restart). */
  dropNonPersistent(): void {
    for (const [k, n] of this.map) if (!isPersistent(n)) this.map.delete(k);
  }

  load(networks: NetworkObj[]): void {
    for (const n of networks) this.map.set(guidKey(n.id), n);
  }
}
