/**
 * V1Api's networks, through HNSCall (microsoft/hcsshim internal/hns/hnsnetwork.go), and the network's ManagementIP,
 * which only v1 shows. The first link of V1Api (network → endpoint → namespace → api.ts, one class across the files
 * of v1/, as hcsshim's internal/hns spreads HNS's objects over hnsnetwork.go, hnsendpoint.go, namespace.go).
 */
import type { DeleteOutcome, HnsApi, NetworkInfo, NetworkSpec } from '../api-types';
import { orUndefined, outcome } from '../answers';
import { networkFromV1 } from '../converters';
import { HostOpsBase } from '../host-ops';
import { render } from '../policies';
import type { HnsV1Network } from '../schema';

/**
 * managementIpOf: the network's ManagementIP. win-overlay reads it from the v1 network (hcsshim GetHNSNetworkByName)
 * even on its HCN path (containernetworking/plugins plugins/main/windows/win-overlay); so do we, when HNSCall exists.
 */
export async function managementIpOf(api: HnsApi, network: NetworkInfo): Promise<string | undefined> {
  if (network.managementIp !== undefined) return network.managementIp;
  if (!api.hcn.capabilities.v1Supported) return undefined;
  const n = await api.hcn.hnsCall<HnsV1Network>('GET', `/networks/${network.id}`);
  return typeof n?.ManagementIP === 'string' && n.ManagementIP !== '' ? n.ManagementIP : undefined;
}

export abstract class V1Networks extends HostOpsBase {
  async listNetworks(): Promise<NetworkInfo[]> {
    return ((await this.hcn.hnsCall<HnsV1Network[]>('GET', '/networks/')) ?? []).map(networkFromV1);
  }
  async findNetworkByName(name: string): Promise<NetworkInfo | undefined> {
    return (await this.listNetworks()).find((n) => n.name === name);
  }
  async getNetwork(id: string): Promise<NetworkInfo | undefined> {
    const n = await orUndefined(this.hcn.hnsCall<HnsV1Network>('GET', `/networks/${id}`));
    return n ? networkFromV1(n) : undefined;
  }
  async createNetwork(spec: NetworkSpec, id?: string): Promise<NetworkInfo> {
    // No Flags: HNS v1's network has none (microsoft/hcsshim internal/hns/hnsnetwork.go HNSNetwork).
    const body: HnsV1Network = {
      Name: spec.name,
      // Docker and hcsshim send the v1 type in lower case.
      Type: spec.type.toLowerCase(),
      Policies: render(spec.policies, 1) as HnsV1Network['Policies'],
      Subnets: spec.subnets.map((s) =>
        s.gateway ? { AddressPrefix: s.prefix, GatewayAddress: s.gateway } : { AddressPrefix: s.prefix },
      ),
    };
    if (id) body.ID = id;
    if (spec.adapterName) body.NetworkAdapterName = spec.adapterName;
    return networkFromV1(await this.hcn.hnsCall<HnsV1Network>('POST', '/networks/', body));
  }
  deleteNetwork(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.hnsCall('DELETE', `/networks/${id}`));
  }
}
