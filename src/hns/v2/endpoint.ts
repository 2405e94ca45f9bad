/** V2Api's endpoints, through HCN (microsoft/hcsshim hcn/hcnendpoint.go); the link after v2/network.ts. */
import { defaultRoute, familyOf } from '../../net/ipv4';
import type { DeleteOutcome, EndpointInfo, EndpointListing, EndpointSpec, NetworkInfo } from '../api-types';
import { orUndefined, outcome } from '../answers';
import { endpointFromV1, endpointFromV2, endpointsOfListing } from '../converters';
import type { HnsV1Endpoint, HostComputeEndpoint, TypedPolicy } from '../schema';
import { V2Networks } from './network';

export abstract class V2Endpoints extends V2Networks {
  /** HcnEnumerateEndpoints (ids only): the v2 listing may go through HNSCall, which answers where HCN does not. */
  endpointIds(): Promise<string[]> {
    return this.hcn.enumerateEndpoints();
  }

  async listEndpoints(): Promise<EndpointInfo[]> {
    return endpointsOfListing(await this.listEndpointDocuments());
  }
  async listEndpointDocuments(): Promise<EndpointListing> {
    if (this.bulkV1) return { view: 1, docs: (await this.hcn.hnsCall<HnsV1Endpoint[]>('GET', '/endpoints/')) ?? [] };
    return { view: 2, docs: await this.hcn.listEndpoints() };
  }
  async findEndpoints(filter: { name: string } | { networkId: string }): Promise<EndpointInfo[]> {
    // The v1 field names: hcsshim's filters use Name and VirtualNetwork (HNS has no v2 key for the network).
    const ids = await this.hcn.enumerateEndpoints(
      'name' in filter ? { Name: filter.name } : { VirtualNetwork: filter.networkId },
    );
    const found: EndpointInfo[] = [];
    for (const id of ids) {
      // The v1 view where HNSCall exists: it shows SharedContainers (a hot-attached endpoint is in use), as the
      // audit's bulk listing does.
      const e = this.bulkV1
        ? await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${id}`)).then(
            (v) => v && endpointFromV1(v),
          )
        : await this.getEndpoint(id);
      if (e) found.push(e);
    }
    return found;
  }
  async getEndpoint(id: string): Promise<EndpointInfo | undefined> {
    const e = await orUndefined(this.hcn.getEndpoint(id));
    return e ? endpointFromV2(e) : undefined;
  }
  /**
   * HCN's create, three round trips: HcnCreateEndpoint takes an open network handle and answers only an error
   * record, so the endpoint's properties take a query of their own (microsoft/hcsshim hcn/hcnendpoint.go
   * createEndpoint: hcnOpenNetwork, hcnCreateEndpoint, hcnQueryEndpointProperties). With held handles (the resident
   * service, held-handles.ts) the network's handle is kept, and the create is two.
   */
  async createEndpoint(network: NetworkInfo, spec: EndpointSpec, id?: string): Promise<EndpointInfo> {
    const settings: HostComputeEndpoint = { Name: spec.name, Policies: spec.policies };
    if (spec.ips.length > 0)
      settings.IpConfigurations = spec.ips.map((ip) => ({ IpAddress: ip.address, PrefixLength: ip.prefixLength }));
    if (spec.mac) settings.MacAddress = spec.mac;
    // One default route per family, as sdnbridge writes them (microsoft/windows-container-networking network/endpoint.go).
    if (spec.gateways?.length)
      settings.Routes = spec.gateways.map((gw) => ({
        NextHop: gw,
        DestinationPrefix: defaultRoute(familyOf(gw) ?? 4),
      }));
    const dns = {
      ServerList: spec.dns.servers,
      Search: spec.dns.search,
      ...(spec.dns.domain ? { Domain: spec.dns.domain } : {}),
      ...(spec.dns.options?.length ? { Options: spec.dns.options } : {}),
    };
    if (dns.ServerList.length || dns.Search.length || dns.Domain || dns.Options) settings.Dns = dns;
    const created = this.held
      ? await this.held.createEndpoint(this.hcn, network.id, settings, id)
      : await this.hcn.createEndpoint(network.id, settings, id);
    return endpointFromV2(created);
  }
  deleteEndpoint(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.deleteEndpoint(id));
  }
  /** microsoft/hcsshim hcn/hcnendpoint.go ApplyPolicy: {"ResourceType":"Policy","RequestType":"Add","Settings":{"Policies":[…]}}. */
  async addEndpointPolicies(id: string, policies: TypedPolicy[]): Promise<void> {
    await this.hcn.modifyEndpoint(id, { ResourceType: 'Policy', RequestType: 'Add', Settings: { Policies: policies } });
  }
}
