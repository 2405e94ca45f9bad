/**
 * An endpoint created through HNS v1 (a v1 host) carries what its spec gives, as the HCN create does: the MAC address
 * (a delegated NIC's endpoint takes the NIC's MAC, not one HNS picks), the pod's DNS domain in DNSDomain and its
 * search list in DNSSuffix (microsoft/hcsshim internal/hns/hnsendpoint.go HNSEndpoint). The service's create (held
 * handles) goes through HCN and carries the same MAC. Read back from the simulator as HNS v1 shows the endpoint.
 */
import { V1Api, V2Api, type EndpointSpec, type HnsApi } from '../../src/hns/api';
import { HeldHandles } from '../../src/hns/held-handles';
import { useHcn } from './helpers';

const fx = useHcn();

const spec: EndpointSpec = {
  name: 'hcn-ep-v1-body',
  ips: [{ address: '10.244.1.7', prefixLength: 24 }],
  gateways: ['10.244.1.1'],
  mac: '00-15-5D-AB-00-07',
  dns: { servers: ['10.0.0.10'], search: ['svc.cluster.local', 'cluster.local'], domain: 'default.svc.cluster.local' },
  policies: [],
};

const network = (api: HnsApi) =>
  api.createNetwork({
    name: 'cbr0',
    type: 'L2Bridge',
    flags: 0,
    subnets: [{ prefix: '10.244.1.0/24', gateway: '10.244.1.1' }],
    policies: [],
  });
const shown = (id: string) =>
  fx.hcn.hnsCall<{ MacAddress?: string; DNSSuffix?: string; DNSDomain?: string }>('GET', `/endpoints/${id}`);

it('on a v1 host: the MAC the spec gives, the DNS domain in DNSDomain and the search list in DNSSuffix', async () => {
  const api = new V1Api(fx.hcn);
  const ep = await shown((await api.createEndpoint(await network(api), spec)).id);
  expect(ep?.MacAddress?.toUpperCase()).toBe('00-15-5D-AB-00-07');
  expect({ domain: ep?.DNSDomain, search: ep?.DNSSuffix }).toEqual({
    domain: 'default.svc.cluster.local',
    search: 'svc.cluster.local,cluster.local',
  });
});

it("the service's create (held handles): the MAC the spec gives", async () => {
  const api = new V2Api(fx.hcn, 'auto', new HeldHandles());
  const ep = await shown((await api.createEndpoint(await network(api), spec)).id);
  expect(ep?.MacAddress?.toUpperCase()).toBe('00-15-5D-AB-00-07');
});
