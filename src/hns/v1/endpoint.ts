/** V1Api's endpoints, through HNSCall (microsoft/hcsshim internal/hns/hnsendpoint.go); the link after v1/network.ts. */
import { familyOf } from '../../net/ipv4';
import type { DeleteOutcome, EndpointInfo, EndpointListing, EndpointSpec, NetworkInfo } from '../api-types';
import { orUndefined, outcome, sameId } from '../answers';
import { endpointFromV1, endpointsOfListing } from '../converters';
import { PolicyError, render } from '../policies';
import type { HnsV1Endpoint } from '../schema';
import { V1Networks } from './network';

export abstract class V1Endpoints extends V1Networks {
  async endpointIds(): Promise<string[]> {
    return (await this.listEndpoints()).map((e) => e.id);
  }
  async listEndpoints(): Promise<EndpointInfo[]> {
    return endpointsOfListing(await this.listEndpointDocuments());
  }
  async listEndpointDocuments(): Promise<EndpointListing> {
    return { view: 1, docs: (await this.hcn.hnsCall<HnsV1Endpoint[]>('GET', '/endpoints/')) ?? [] };
  }
  async findEndpoints(filter: { name: string } | { networkId: string }): Promise<EndpointInfo[]> {
    // HNSCall has no query: hcsshim internal/hns GetHNSEndpointByName lists them all too.
    const all = await this.listEndpoints();
    return 'name' in filter
      ? all.filter((e) => e.name === filter.name)
      : all.filter((e) => sameId(e.networkId, filter.networkId));
  }
  async getEndpoint(id: string): Promise<EndpointInfo | undefined> {
    const e = await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${id}`));
    return e ? endpointFromV1(e) : undefined;
  }
  async createEndpoint(network: NetworkInfo, spec: EndpointSpec, id?: string): Promise<EndpointInfo> {
    return endpointFromV1(
      await this.hcn.hnsCall<HnsV1Endpoint>('POST', '/endpoints/', v1EndpointSpec(network, spec, id)),
    );
  }
  deleteEndpoint(id: string): Promise<DeleteOutcome> {
    return outcome(this.hcn.hnsCall('DELETE', `/endpoints/${id}`));
  }
  addEndpointPolicies(): Promise<void> {
    return Promise.reject(
      new PolicyError('adding policies to an existing endpoint needs the HCN (v2) API; this host uses HNS v1'),
    );
  }
}

/** The v1 body of an endpoint (HNS v1's fields: microsoft/hcsshim internal/hns/hnsendpoint.go HNSEndpoint). */
function v1EndpointSpec(network: NetworkInfo, spec: EndpointSpec, id?: string): HnsV1Endpoint {
  const body: HnsV1Endpoint = {
    Name: spec.name,
    VirtualNetwork: network.id,
    VirtualNetworkName: network.name,
    Policies: render(spec.policies, 1) as HnsV1Endpoint['Policies'],
  };
  if (id) body.ID = id;
  const ip = spec.ips[0];
  if (ip) {
    body.IPAddress = ip.address;
    if (ip.prefixLength !== undefined) body.PrefixLength = ip.prefixLength;
  }
  if (spec.mac) body.MacAddress = spec.mac;
  // The plugin refuses IPv6 on v1 before it gets here (dual-stack is an HCN feature); only IPv4 goes to v1.
  const gw4 = spec.gateways?.find((g) => familyOf(g) === 4);
  if (gw4) body.GatewayAddress = gw4;
  if (spec.dns.servers.length) body.DNSServerList = spec.dns.servers.join(',');
  // The domain has a field of its own (DNSDomain), as HCN's Dns.Domain: it is not one more search suffix.
  if (spec.dns.search.length) body.DNSSuffix = spec.dns.search.join(',');
  if (spec.dns.domain) body.DNSDomain = spec.dns.domain;
  return body;
}
