/** Endpoints: address and MAC allocation, namespaces (v2 modify and v1 add/removeresource), v1 attach, cascade. */
import { expectFailure, l2bridge, natNetwork, ok, okJson, output, Q2, UPPER_GUID, useSimulator, V2 } from './helpers';

const fx = useSimulator();
const ep = (name: string, extra: object = {}) => JSON.stringify({ ...V2, Name: name, ...extra });

test('IPs come from the subnet skipping network, gateway and broadcast; a freed IP is reused', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, l2bridge('small', '10.0.0.0/29', '10.0.0.1')));
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(ok(await c.createEndpoint(net, null, ep(`e${i}`))));
  const ips = [];
  for (const id of ids) ips.push(okJson(await c.queryEndpointProperties(id, Q2)).IpConfigurations[0]);
  expect(ips).toEqual(
    ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'].map((IpAddress) => ({ IpAddress, PrefixLength: 29 })),
  );
  // .7 is the broadcast address: the subnet is full.
  expectFailure(
    await c.createEndpoint(net, null, ep('full')),
    0x803b0005,
    'The network does not have a subnet for this endpoint.',
  );
  ok(await c.deleteEndpoint(ids[1]));
  const again = ok(await c.createEndpoint(net, null, ep('again')));
  expect(okJson(await c.queryEndpointProperties(again, null))).toMatchObject({
    IPAddress: '10.0.0.3',
    PrefixLength: 29,
    GatewayAddress: '10.0.0.1',
  });
  // A requested address is honoured, and the default route points at the gateway.
  const net2 = ok(await c.createNetwork(null, l2bridge('big', '10.8.0.0/16', '10.8.0.1')));
  const fixed = okJson(
    await c.queryEndpointProperties(
      ok(await c.createEndpoint(net2, null, ep('fixed', { IpConfigurations: [{ IpAddress: '10.8.3.4' }] }))),
      Q2,
    ),
  );
  expect(fixed).toMatchObject({
    IpConfigurations: [{ IpAddress: '10.8.3.4', PrefixLength: 16 }],
    Routes: [{ NextHop: '10.8.0.1', DestinationPrefix: '0.0.0.0/0' }],
  });
});

test('MACs come from the network MacPool, else the Hyper-V default pool; uppercase and dash-separated', async () => {
  const { c } = fx;
  const pooled = ok(
    await c.createNetwork(
      null,
      l2bridge('pooled', '10.0.0.0/24', '10.0.0.1', {
        MacPool: { Ranges: [{ StartMacAddress: '00-15-5D-52-C0-00', EndMacAddress: '00-15-5D-52-C0-01' }] },
      }),
    ),
  );
  const macs = [];
  for (let i = 0; i < 2; i++)
    macs.push(
      okJson(await c.queryEndpointProperties(ok(await c.createEndpoint(pooled, null, ep(`p${i}`))), Q2)).MacAddress,
    );
  expect(macs).toEqual(['00-15-5D-52-C0-00', '00-15-5D-52-C0-01']);

  const plain = ok(await c.createNetwork(null, natNetwork('plain')));
  const a = okJson(await c.queryEndpointProperties(ok(await c.createEndpoint(plain, null, ep('a'))), Q2)).MacAddress;
  const b = okJson(await c.queryEndpointProperties(ok(await c.createEndpoint(plain, null, ep('b'))), Q2)).MacAddress;
  expect([a, b]).toEqual(['00-15-5D-51-80-00', '00-15-5D-51-80-01']);
  const given = okJson(
    await c.queryEndpointProperties(
      ok(await c.createEndpoint(plain, null, ep('c', { MacAddress: '00:15:5d:aa:bb:cc' }))),
      Q2,
    ),
  );
  expect(given.MacAddress).toBe('00-15-5D-AA-BB-CC');
  expectFailure(
    await c.createEndpoint(plain, null, ep('d', { MacAddress: 'xx-yy' })),
    0x803b000c,
    'The provided endpoint configuration is invalid or missing parameters.',
  );
});

test('namespaces: v2 modify Add/Remove (names and numbers) shows HostComputeNamespace and Resources', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const e = ok(await c.createEndpoint(net, null, ep('e')));
  const ns = ok(await c.createNamespace(null, JSON.stringify(V2)));
  const nsDefault = ok(await c.createNamespace(null, JSON.stringify({ ...V2, Type: 'HostDefault', NamespaceId: 5 })));
  const plain = okJson(await c.queryNamespaceProperties(ns, Q2));
  expect(plain).not.toHaveProperty('Type'); // Host is the zero value
  expect(plain).not.toHaveProperty('Resources');
  expect(typeof plain.NamespaceId).toBe('number');
  expect(okJson(await c.queryNamespaceProperties(nsDefault, Q2))).toMatchObject({
    ID: nsDefault,
    Type: 'HostDefault',
    NamespaceId: 5,
  });

  ok(
    await c.modifyNamespace(
      ns,
      JSON.stringify({ ResourceType: 'Endpoint', RequestType: 'Add', Settings: { EndpointId: e } }),
    ),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2)).HostComputeNamespace).toBe(ns);
  expect(okJson(await c.queryNamespaceProperties(ns, Q2)).Resources).toEqual([
    { Type: 'Endpoint', Data: { Id: e.toUpperCase() } },
  ]);
  expect(okJson(await c.queryEndpointProperties(e, null)).Namespace).toEqual({ ID: ns, IsDefault: false });
  expect(output(await c.hnsCall('GET', `/namespaces/${ns}`)).ResourceList).toEqual([
    { Type: 'Endpoint', Data: { Id: e.toUpperCase() } },
  ]);

  ok(
    await c.modifyNamespace(
      ns,
      JSON.stringify({ ResourceType: 1, RequestType: 1, Settings: { EndpointId: e.toUpperCase() } }),
    ),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2))).not.toHaveProperty('HostComputeNamespace');
  expectFailure(
    await c.modifyNamespace(ns, JSON.stringify({ ResourceType: 1, RequestType: 1, Settings: { EndpointId: e } })),
    0x803b0034,
    'The endpoint must be attached to complete the operation.',
  );
  ok(
    await c.modifyNamespace(
      nsDefault,
      JSON.stringify({ ResourceType: 1, RequestType: 0, Settings: JSON.stringify({ EndpointId: e }) }),
    ),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2)).HostComputeNamespace).toBe(nsDefault);
  // Deleting the endpoint takes it out of its namespace.
  ok(await c.deleteEndpoint(e));
  expect(okJson(await c.queryNamespaceProperties(nsDefault, Q2))).not.toHaveProperty('Resources');
});

test('namespaces: v1 POST /namespaces, addresource/removeresource, seen by v2 (and the other way round)', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const e = ok(await c.createEndpoint(net, null, ep('e')));
  const created = output(await c.hnsCall('POST', '/namespaces/', '{}'));
  expect(created.ID).toMatch(UPPER_GUID);
  expect(created).toMatchObject({ IsDefault: false, ResourceList: [] });
  output(
    await c.hnsCall(
      'POST',
      `/namespaces/${created.ID}/addresource`,
      JSON.stringify({ Type: 'Endpoint', Data: { Id: e } }),
    ),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2)).HostComputeNamespace).toBe(created.ID);
  expect(okJson(await c.queryNamespaceProperties(created.ID, Q2)).Resources).toEqual([
    { Type: 'Endpoint', Data: { Id: e.toUpperCase() } },
  ]);
  output(
    await c.hnsCall(
      'POST',
      `/namespaces/${created.ID}/removeresource`,
      JSON.stringify({ Type: 'Endpoint', Data: { Id: e } }),
    ),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2))).not.toHaveProperty('HostComputeNamespace');

  // A v2 namespace, used through v1 (hcsoci releases namespaces with removeresource + DELETE).
  const ns2 = ok(await c.createNamespace(null, JSON.stringify(V2)));
  output(
    await c.hnsCall('POST', `/namespaces/${ns2}/addresource`, JSON.stringify({ Type: 'Endpoint', Data: { Id: e } })),
  );
  expect(okJson(await c.queryEndpointProperties(e, Q2)).HostComputeNamespace).toBe(ns2);
  expect(JSON.parse(ok(await c.enumerateNamespaces(null)))).toEqual([created.ID, ns2]);
  expect(output(await c.hnsCall('DELETE', `/namespaces/${ns2}`))).toBeUndefined();
  expect(okJson(await c.queryEndpointProperties(e, Q2))).not.toHaveProperty('HostComputeNamespace');
  expectFailure(await c.openNamespace(ns2), 0x80070490, 'Element not found.');
});

test('v1 attach/detach: SharedContainers and State 1 → 2 → 4', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const e = ok(await c.createEndpoint(net, null, ep('e')));
  const get = async () => output(await c.hnsCall('GET', `/endpoints/${e}`));
  expect(await get()).toMatchObject({ State: 1, SharedContainers: [] });
  output(
    await c.hnsCall(
      'POST',
      `/endpoints/${e}/attach`,
      JSON.stringify({ ContainerId: 'sandbox', SystemType: 'Container' }),
    ),
  );
  output(
    await c.hnsCall(
      'POST',
      `/endpoints/${e}/attach`,
      JSON.stringify({ ContainerId: 'workload', SystemType: 'Container' }),
    ),
  );
  expect(await get()).toMatchObject({ State: 2, SharedContainers: ['sandbox', 'workload'] });
  output(
    await c.hnsCall(
      'POST',
      `/endpoints/${e}/detach`,
      JSON.stringify({ ContainerId: 'sandbox', SystemType: 'Container' }),
    ),
  );
  expect(await get()).toMatchObject({ State: 2, SharedContainers: ['workload'] });
  output(
    await c.hnsCall(
      'POST',
      `/endpoints/${e}/detach`,
      JSON.stringify({ ContainerId: 'workload', SystemType: 'Container' }),
    ),
  );
  expect(await get()).toMatchObject({ State: 4, SharedContainers: [] });
  const env = JSON.parse(
    (
      await c.hnsCall(
        'POST',
        `/endpoints/${e}/detach`,
        JSON.stringify({ ContainerId: 'workload', SystemType: 'Container' }),
      )
    ).result!,
  );
  expect(env).toEqual({
    Success: false,
    Error: 'The endpoint must be attached to complete the operation. ',
    ErrorCode: 0x803b0034,
  });
  // Host attach has no container id (hnslib HostAttach).
  output(await c.hnsCall('POST', `/endpoints/${e}/attach`, JSON.stringify({ SystemType: 'Host', CompartmentId: 1 })));
  expect(await get()).toMatchObject({ State: 2, SharedContainers: ['Host'] });
});

test('deleting a network with endpoints cascades by default (endpoints and their namespace entries go)', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const keep = ok(await c.createNetwork(null, natNetwork('keep')));
  const e1 = ok(await c.createEndpoint(net, null, ep('e1')));
  ok(await c.createEndpoint(net, null, ep('e2')));
  const e3 = ok(await c.createEndpoint(keep, null, ep('e3')));
  const ns = ok(await c.createNamespace(null, JSON.stringify(V2)));
  ok(
    await c.modifyNamespace(
      ns,
      JSON.stringify({ ResourceType: 'Endpoint', RequestType: 'Add', Settings: { EndpointId: e1 } }),
    ),
  );
  ok(await c.deleteNetwork(net));
  expect(JSON.parse(ok(await c.enumerateEndpoints(null)))).toEqual([e3]);
  expect(okJson(await c.queryNamespaceProperties(ns, Q2))).not.toHaveProperty('Resources');
  expectFailure(await c.openEndpoint(e1), 0x803b0002, 'The endpoint was not found.');
});

test('a port mapping is held once per host (0x803B0013); endpoint names need not be unique', async () => {
  const { c } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  const pm = { Policies: [{ Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } }] };
  ok(await c.createEndpoint(net, null, ep('web', pm)));
  expectFailure(await c.createEndpoint(net, null, ep('web', pm)), 0x803b0013, 'The specified port already exists.');
  ok(
    await c.createEndpoint(
      net,
      null,
      ep('web', {
        Policies: [{ Type: 'PortMapping', Settings: { Protocol: 17, InternalPort: 80, ExternalPort: 8080 } }],
      }),
    ),
  );
  expectFailure(
    await c.createEndpoint(
      net,
      null,
      ep('web', { Policies: [{ Type: 'PortMapping', Settings: { Protocol: 6, ExternalPort: 81 } }] }),
    ),
    0x803b002d,
    'The internal port must exist and cannot be zero.',
  );
});
