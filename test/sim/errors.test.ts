/** Every error HNS answers that the simulator models, with its exact HRESULT and error record. */
import {
  errorRecordFor,
  expectEnvelopeFailure,
  expectFailure,
  l2bridge,
  natNetwork,
  ok,
  output,
  useSimulator,
  V2,
} from './helpers';

const fx = useSimulator();

const NOWHERE = '0badc0de-0000-4000-8000-000000000001';
const M = {
  networkNotFound: 'The network was not found.',
  endpointNotFound: 'The endpoint was not found.',
  elementNotFound: 'Element not found.',
  nameExists: 'A network with this name already exists.',
  idExists: 'Cannot create a file when that file already exists.',
  invalidJson: 'Invalid JSON document string.',
  invalidNetwork: 'The provided network configuration is invalid or missing parameters.',
  invalidType: 'Invalid network type.',
  invalidSubnet: 'The provided subnet configuration is invalid or missing parameters.',
  invalidPolicy: 'The provided policy configuration is invalid or missing parameters.',
  invalidPolicyType: 'Invalid policy type.',
  reserved: 'An address provided is invalid or reserved.',
  invalidIp: 'IP address is either invalid or not part of any configured subnet(s).',
  alreadyAttached: 'This endpoint is already attached to the switch.',
  inNamespace: 'This requested operation is invalid as endpoint is already part of a network namespace.',
  hasReferences: 'The specified entity cannot be removed while it still has references.',
  adapterNotFound: 'An adapter was not found.',
  invalidArg: 'The parameter is incorrect.',
  notImpl: 'Not implemented.',
};

test('the error record is HNS’s exact text: message, trailing space, unsigned decimal ErrorCode', async () => {
  const r = await fx.c.openNetwork(NOWHERE);
  expect(r.errorRecord).toBe('{"Success":false,"Error":"The network was not found. ","ErrorCode":2151350273}');
  expect(r.hr).toBe(0x803b0001);
});

test('unknown objects: network 0x803B0001, endpoint 0x803B0002, namespace 0x80070490 — through v2 and v1', async () => {
  const { c } = fx;
  for (const r of [
    await c.openNetwork(NOWHERE),
    await c.queryNetworkProperties(NOWHERE),
    await c.deleteNetwork(NOWHERE),
    await c.modifyNetwork(NOWHERE, '{}'),
  ]) {
    expectFailure(r, 0x803b0001, M.networkNotFound);
  }
  expectFailure(
    await c.createEndpoint(NOWHERE, null, JSON.stringify({ ...V2, Name: 'e' })),
    0x803b0001,
    M.networkNotFound,
  );
  for (const r of [
    await c.openEndpoint(NOWHERE),
    await c.queryEndpointProperties(NOWHERE),
    await c.deleteEndpoint(NOWHERE),
    await c.modifyEndpoint(NOWHERE, '{}'),
  ]) {
    expectFailure(r, 0x803b0002, M.endpointNotFound);
  }
  for (const r of [
    await c.openNamespace(NOWHERE),
    await c.queryNamespaceProperties(NOWHERE),
    await c.deleteNamespace(NOWHERE),
    await c.modifyNamespace(NOWHERE, '{}'),
  ]) {
    expectFailure(r, 0x80070490, M.elementNotFound);
  }
  expectEnvelopeFailure(await c.hnsCall('GET', `/networks/${NOWHERE}`), 0x803b0001, M.networkNotFound);
  expectEnvelopeFailure(await c.hnsCall('DELETE', `/networks/${NOWHERE}`), 0x803b0001, M.networkNotFound);
  expectEnvelopeFailure(await c.hnsCall('GET', `/endpoints/${NOWHERE}`), 0x803b0002, M.endpointNotFound);
  expectEnvelopeFailure(
    await c.hnsCall('POST', `/endpoints/${NOWHERE}/attach`, '{"ContainerId":"c1","SystemType":"Container"}'),
    0x803b0002,
    M.endpointNotFound,
  );
  expectEnvelopeFailure(await c.hnsCall('DELETE', `/namespaces/${NOWHERE}`), 0x80070490, M.elementNotFound);
  expectEnvelopeFailure(
    await c.hnsCall('POST', '/endpoints/', JSON.stringify({ Name: 'e', VirtualNetwork: NOWHERE })),
    0x803b0001,
    M.networkNotFound,
  );
});

test('duplicate name 0x803B0010 (also against a create still in flight), duplicate id 0x800700B7', async () => {
  const { c, sim } = fx;
  const id = ok(await c.createNetwork(null, natNetwork('dup')));
  expectFailure(await c.createNetwork(null, natNetwork('dup')), 0x803b0010, M.nameExists);
  expectEnvelopeFailure(
    await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'dup', Type: 'nat' })),
    0x803b0010,
    M.nameExists,
  );
  expectFailure(await c.createNetwork(id.toUpperCase(), natNetwork('other')), 0x800700b7, M.idExists);

  // Two creates of one name in flight together: the second fails once the first commits.
  await sim.control.setLatency('HcnCreateNetwork', 60);
  const [first, second] = await Promise.all([
    c.createNetwork(null, natNetwork('racing')),
    c.createNetwork(null, natNetwork('racing')),
  ]);
  ok(first);
  expectFailure(second, 0x803b0010, M.nameExists);

  const net = ok(await c.createNetwork(null, l2bridge('l2')));
  const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
  expectFailure(await c.createEndpoint(net, ep, JSON.stringify({ ...V2, Name: 'e2' })), 0x800700b7, M.idExists);
  const ns = ok(await c.createNamespace(null, JSON.stringify(V2)));
  expectFailure(await c.createNamespace(ns, JSON.stringify(V2)), 0x800700b7, M.idExists);
});

test('unparsable JSON 0x803B001B for settings and HNSCall bodies', async () => {
  const { c } = fx;
  expectFailure(await c.createNetwork(null, '{"Name":'), 0x803b001b, M.invalidJson);
  expectFailure(await c.createNetwork(null, null), 0x803b001b, M.invalidJson);
  expectFailure(await c.createNamespace(null, '[]'), 0x803b001b, M.invalidJson);
  expectEnvelopeFailure(await c.hnsCall('POST', '/networks/', 'nope'), 0x803b001b, M.invalidJson);
});

test('invalid network config 0x803B000A, unknown type 0x803B000B, malformed subnet 0x803B0032', async () => {
  const { c } = fx;
  for (const type of ['L2Bridge', 'L2Tunnel', 'Overlay']) {
    expectFailure(
      await c.createNetwork(null, JSON.stringify({ ...V2, Name: type, Type: type })),
      0x803b000a,
      M.invalidNetwork,
    );
  }
  expectEnvelopeFailure(
    await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'x', Type: 'l2bridge' })),
    0x803b000a,
    M.invalidNetwork,
  );
  expectFailure(
    await c.createNetwork(null, l2bridge('gw-out', '10.1.0.0/24', '10.2.0.1')),
    0x803b000a,
    M.invalidNetwork,
  );
  expectFailure(
    await c.createNetwork(null, l2bridge('gw-bcast', '10.1.0.0/24', '10.1.0.255')),
    0x803b000a,
    M.invalidNetwork,
  );
  expectFailure(
    await c.createNetwork(null, l2bridge('gw-junk', '10.1.0.0/24', 'gateway')),
    0x803b000a,
    M.invalidNetwork,
  );
  expectFailure(
    await c.createNetwork(
      null,
      JSON.stringify({
        Name: 'v1gw',
        Type: 'l2bridge',
        Subnets: [{ AddressPrefix: '10.1.0.0/24', GatewayAddress: '10.9.0.1' }],
      }),
    ),
    0x803b000a,
    M.invalidNetwork,
  );

  expectFailure(
    await c.createNetwork(null, JSON.stringify({ ...V2, Name: 't', Type: 'Bridgey' })),
    0x803b000b,
    M.invalidType,
  );
  expectEnvelopeFailure(
    await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 't', Type: 'layered' })),
    0x803b000b,
    M.invalidType,
  );

  for (const prefix of ['10.1.0.0', '10.1.0.0/33', '300.1.0.0/24', '', 'banana/8']) {
    expectFailure(await c.createNetwork(null, l2bridge('bad-subnet', prefix, '10.1.0.1')), 0x803b0032, M.invalidSubnet);
  }
  expectFailure(
    await c.createNetwork(
      null,
      JSON.stringify({ ...V2, Name: 's', Type: 'NAT', Ipams: [{ Subnets: [{ Routes: [] }] }] }),
    ),
    0x803b0032,
    M.invalidSubnet,
  );
  expect(JSON.parse(ok(await c.enumerateNetworks(null)))).toEqual([]);
});

test('invalid policy 0x803B000D, unknown policy type 0x803B000E', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, l2bridge('n')));
  const ep = (policies: unknown[]) =>
    c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e', Policies: policies }));
  for (const bad of [
    { Type: 'OutBoundNAT', Settings: { Exceptions: '10.0.0.0/8' } },
    { Type: 'OutBoundNAT', Settings: { Exceptions: ['not-a-prefix'] } },
    { Type: 'OutBoundNAT', Settings: 'not json' },
    { Type: 'QOS', Settings: {} },
    { Type: 'ACL', Settings: { Action: 'Maybe', Direction: 'In' } },
    { Type: 'SDNRoute', Settings: { NeedEncap: true } },
    { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 99999, ExternalPort: 80 } },
    { Settings: {} },
  ]) {
    expectFailure(await ep([bad]), 0x803b000d, M.invalidPolicy);
  }
  // Only the types hcsshim names (hcn/hcnpolicy.go, internal/hns/hnspolicy.go): 'Firewall' and 'Encryption' are not.
  for (const Type of ['Teleport', 'Firewall', 'Encryption'])
    expectFailure(await ep([{ Type, Settings: {} }]), 0x803b000e, M.invalidPolicyType);
  // A network policy type is not an endpoint policy type, and the other way round.
  expectFailure(
    await ep([{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }]),
    0x803b000e,
    M.invalidPolicyType,
  );
  expectFailure(
    await c.createNetwork(null, natNetwork('p', { Policies: [{ Type: 'OutBoundNAT', Settings: {} }] })),
    0x803b000e,
    M.invalidPolicyType,
  );
  expectEnvelopeFailure(
    await c.hnsCall(
      'POST',
      '/endpoints/',
      JSON.stringify({
        VirtualNetwork: net,
        Policies: [{ Type: 'NAT', Protocol: 'sctp', InternalPort: 1, ExternalPort: 2 }],
      }),
    ),
    0x803b000d,
    M.invalidPolicy,
  );
  expectEnvelopeFailure(
    await c.hnsCall('POST', '/endpoints/', JSON.stringify({ VirtualNetwork: net, Policies: [{ Type: 'WORMHOLE' }] })),
    0x803b000e,
    M.invalidPolicyType,
  );
  // Nothing was created by any of these.
  expect(JSON.parse(ok(await c.enumerateEndpoints(null)))).toEqual([]);
});

test('IP outside every subnet 0x803B001E, IP already held 0x803B002F', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, l2bridge('n', '10.10.0.0/24', '10.10.0.1')));
  const ep = (ip: string) =>
    c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e', IpConfigurations: [{ IpAddress: ip }] }));
  ok(await ep('10.10.0.21'));
  expectFailure(await ep('10.10.0.21'), 0x803b002f, M.reserved);
  expectFailure(await ep('10.10.0.1'), 0x803b002f, M.reserved); // the gateway
  expectFailure(await ep('10.10.0.255'), 0x803b002f, M.reserved); // broadcast
  expectFailure(await ep('10.99.0.5'), 0x803b001e, M.invalidIp);
  expectFailure(await ep('ten.ten'), 0x803b001e, M.invalidIp);
});

test('already attached: v1 attach twice 0x803B0014, namespace add of an endpoint already in one 0x803B002B', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
  output(await c.hnsCall('POST', `/endpoints/${ep}/attach`, '{"ContainerId":"c1","SystemType":"Container"}'));
  expectEnvelopeFailure(
    await c.hnsCall('POST', `/endpoints/${ep}/attach`, '{"ContainerId":"c1","SystemType":"Container"}'),
    0x803b0014,
    M.alreadyAttached,
  );

  const ns1 = ok(await c.createNamespace(null, JSON.stringify(V2)));
  const ns2 = ok(await c.createNamespace(null, JSON.stringify(V2)));
  const add = JSON.stringify({ ResourceType: 'Endpoint', RequestType: 'Add', Settings: { EndpointId: ep } });
  ok(await c.modifyNamespace(ns1, add));
  expectFailure(await c.modifyNamespace(ns1, add), 0x803b002b, M.inNamespace);
  expectFailure(await c.modifyNamespace(ns2, add), 0x803b002b, M.inNamespace);
  expectEnvelopeFailure(
    await c.hnsCall('POST', `/namespaces/${ns2}/addresource`, JSON.stringify({ Type: 'Endpoint', Data: { Id: ep } })),
    0x803b002b,
    M.inNamespace,
  );
});

test('deleting a network with endpoints: 0x803B002C when refused, nothing removed', async () => {
  const { c, sim } = fx;
  await sim.control.setDeleteNetworkWithEndpoints('refuse');
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
  expectFailure(await c.deleteNetwork(net), 0x803b002c, M.hasReferences);
  expectEnvelopeFailure(await c.hnsCall('DELETE', `/networks/${net}`), 0x803b002c, M.hasReferences);
  expect(JSON.parse(ok(await c.enumerateEndpoints(null)))).toEqual([ep]);
  ok(await c.deleteEndpoint(ep));
  ok(await c.deleteNetwork(net));
});

test('unknown adapter 0x803B0006; unknown HNSCall path and malformed requests E_INVALIDARG; no HCN: E_NOTIMPL', async () => {
  const { c, sim } = fx;
  expectFailure(
    await c.createNetwork(
      null,
      l2bridge('x', '10.0.0.0/24', '10.0.0.1', {
        Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'vEthernet (nat)' } }],
      }),
    ),
    0x803b0006,
    M.adapterNotFound,
  );
  expect(errorRecordFor(0x803b0006, M.adapterNotFound)).toBe(
    '{"Success":false,"Error":"An adapter was not found. ","ErrorCode":2151350278}',
  );

  expectEnvelopeFailure(await c.hnsCall('GET', '/activities/'), 0x80070057, M.invalidArg);
  expectEnvelopeFailure(await c.hnsCall('PATCH', '/networks/'), 0x80070057, M.invalidArg);
  expectEnvelopeFailure(await c.hnsCall('GET', '/networks/a/b/c'), 0x80070057, M.invalidArg);
  expectFailure(await c.call({ op: 'HcnFrobnicateNetwork' }), 0x80070057, M.invalidArg);
  expectFailure(await c.openNetwork('not-a-guid'), 0x80070057, M.invalidArg);

  await sim.control.setVersion(9, 1, { v2: false });
  expectFailure(await c.enumerateNetworks(null), 0x80004001, M.notImpl);
  expectFailure(await c.createNetwork(null, natNetwork('n')), 0x80004001, M.notImpl);
  expect(output(await c.hnsCall('GET', '/globals/version'))).toEqual({ Major: 9, Minor: 1 });
  expect(output(await c.hnsCall('GET', '/networks/'))).toEqual([]);
});
