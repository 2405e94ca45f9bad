/**
 * V2Api's networks, through HCN (microsoft/hcsshim hcn/hcnnetwork.go), read through HNSCall where HCN needs a call per
 * object and v1 answers in one. The first link of V2Api (network → endpoint → namespace → api.ts, one class across
 * the files of v2/, as hcsshim's hcn/ spreads HNS's objects over hcnnetwork.go, hcnendpoint.go, hcnnamespace.go): it
 * holds what every link reads.
 */
import { defaultRoute, familyOf } from '../../net/ipv4';
import type { DeleteOutcome, Listing, NetworkInfo, NetworkSpec } from '../api-types';
import { orUndefined, outcome } from '../answers';
import { networkFromV1, networkFromV2 } from '../converters';
import type { Hcn } from '../hcn';
import type { HeldHandles } from '../held-handles';
import { HostOpsBase } from '../host-ops';
import type { HnsV1Network, HostComputeNetwork, TypedPolicy } from '../schema';

export abstract class V2Networks extends HostOpsBase {
  /** Reads through HNSCall where HCN needs a call per object and v1 answers in one (docs/hns-round-trips.md). */
  protected readonly bulkV1: boolean;
  /** HCN handles kept between verbs (the resident service: held-handles.ts); none in the standalone executable. */
  protected readonly held: HeldHandles | undefined;
  constructor(hcn: Hcn, listing: Listing = 'auto', held?: HeldHandles) {
    super(hcn);
    this.bulkV1 = listing === 'v1' || (listing === 'auto' && hcn.capabilities.v1Supported);
    this.held = held;
  }

  async listNetworks(): Promise<NetworkInfo[]> {
    if (this.bulkV1) return ((await this.hcn.hnsCall<HnsV1Network[]>('GET', '/networks/')) ?? []).map(networkFromV1);
    return (await this.hcn.listNetworks()).map(networkFromV2);
  }
  async findNetworkByName(name: string): Promise<NetworkInfo | undefined> {
    // One HNSCall lists a node's few networks (pods are endpoints); HCN's filtered query is three calls (enumerate,
    // open, query).
    if (this.bulkV1) return (await this.listNetworks()).find((n) => n.name === name);
    const n = await this.hcn.findNetworkByName(name);
    return n ? networkFromV2(n) : undefined;
  }
  async getNetwork(id: string): Promise<NetworkInfo | undefined> {
    const n = await orUndefined(this.hcn.getNetwork(id));
    return n ? networkFromV2(n) : undefined;
  }
  async createNetwork(spec: NetworkSpec, id?: string): Promise<NetworkInfo> {
    const policies: TypedPolicy[] = [...spec.policies];
    if (spec.adapterName)
      policies.unshift({ Type: 'NetAdapterName', Settings: { NetworkAdapterName: spec.adapterName } });
    const settings: HostComputeNetwork = { Name: spec.name, Type: spec.type, Flags: spec.flags, Policies: policies };
    if (spec.subnets.length > 0) {
      settings.Ipams = [
        {
          Type: 'Static',
          Subnets: spec.subnets.map((s) => ({
            IpAddressPrefix: s.prefix,
            ...(s.gateway
              ? { Routes: [{ NextHop: s.gateway, DestinationPrefix: defaultRoute(familyOf(s.prefix) ?? 4) }] }
              : {}),
          })),
        },
      ];
    }
    return networkFromV2(await this.hcn.createNetwork(settings, id));
  }
  deleteNetwork(id: string): Promise<DeleteOutcome> {
    this.held?.forgetNetwork(this.hcn, id);
    return outcome(this.hcn.deleteNetwork(id));
  }
}
