/**
 * Which endpoints the resident service creates with one HNSCall (src/hns/api.ts v1EndpointBody): only those HNS v1
 * says whole. Anything v1 has no field for (IPv6, resolver options, a policy type or setting v1 lacks) leaves the
 * create to HCN, so the endpoint HNS makes is the one the configuration asked for.
 */
import { v1EndpointBody, type EndpointSpec, type NetworkInfo } from '../../src/hns/api';

const network: NetworkInfo = {
  id: '0f7a3a8e-1c1a-4c6c-9d5c-2a3b4c5d6e7f',
  name: 'cbr0',
  type: 'L2Bridge',
  flags: 0,
  subnets: [{ prefix: '10.244.1.0/24', gateway: '10.244.1.1' }],
};
const spec = (extra: Partial<EndpointSpec> = {}): EndpointSpec => ({
  name: 'hcn-ep-x',
  ips: [{ address: '10.244.1.7', prefixLength: 24 }],
  gateways: ['10.244.1.1'],
  dns: { servers: ['10.0.0.10'], search: ['svc.cluster.local'] },
  policies: [
    { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.244.0.0/16'] } },
    { Type: 'SDNRoute', Settings: { DestinationPrefix: '10.96.0.0/12', NeedEncap: true } },
    { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } },
  ],
  ...extra,
});

it('says an IPv4 endpoint with policies v1 has, field for field, in v1 form', () => {
  expect(v1EndpointBody(network, spec(), 'b1d6a0c2-0000-4000-8000-000000000001')).toEqual({
    Name: 'hcn-ep-x',
    ID: 'b1d6a0c2-0000-4000-8000-000000000001',
    VirtualNetwork: network.id,
    VirtualNetworkName: 'cbr0',
    IPAddress: '10.244.1.7',
    PrefixLength: 24,
    GatewayAddress: '10.244.1.1',
    DNSServerList: '10.0.0.10',
    DNSSuffix: 'svc.cluster.local',
    Policies: [
      { Type: 'OutBoundNAT', ExceptionList: ['10.244.0.0/16'] },
      { Type: 'ROUTE', DestinationPrefix: '10.96.0.0/12', NeedEncap: true },
      { Type: 'NAT', Protocol: 'tcp', InternalPort: 80, ExternalPort: 8080 },
    ],
  });
});

it.each<[string, () => [NetworkInfo, EndpointSpec]]>([
  ['an IPv6 address', () => [network, spec({ ips: [{ address: 'fd00::7', prefixLength: 64 }] })]],
  [
    'two addresses (dual-stack)',
    () => [network, spec({ ips: [{ address: '10.244.1.7' }, { address: 'fd00::7' }], gateways: ['10.244.1.1'] })],
  ],
  [
    'HNS assigning on a network with an IPv6 subnet',
    () => [{ ...network, subnets: [...network.subnets, { prefix: 'fd00::/64' }] }, spec({ ips: [] })],
  ],
  ['an IPv6 gateway', () => [network, spec({ gateways: ['10.244.1.1', 'fd00::1'] })]],
  ['resolver options', () => [network, spec({ dns: { servers: [], search: [], options: ['ndots:5'] } })]],
  [
    'a policy type v1 lacks',
    () => [network, spec({ policies: [{ Type: 'L4WfpProxy', Settings: { Port: '15001' } }] })],
  ],
  ['a policy type we do not translate', () => [network, spec({ policies: [{ Type: 'Something', Settings: {} }] })]],
  [
    'a setting v1 lacks (a port mapping with a host IP)',
    () => [
      network,
      spec({
        policies: [{ Type: 'PortMapping', Settings: { InternalPort: 80, ExternalPort: 8080, VIP: '10.0.0.1' } }],
      }),
    ],
  ],
  [
    'a setting we do not translate',
    () => [network, spec({ policies: [{ Type: 'OutBoundNAT', Settings: { Exceptions: [], Unknown: 1 } }] })],
  ],
])('leaves the create to HCN for %s', (_what, make) => {
  const [net, s] = make();
  expect(v1EndpointBody(net, s)).toBeUndefined();
});
