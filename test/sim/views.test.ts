/** One object store, two schemas: the v1 and v2 views of the same objects, GUID case, policies, filters. */
import {
  LOWER_GUID,
  Q1,
  Q2,
  UPPER_GUID,
  V2,
  filterQuery,
  l2bridge,
  natNetwork,
  ok,
  okJson,
  output,
  useSimulator,
  expectFailure,
} from './helpers';

const fx = useSimulator();

const SAMPLE_A = {
  ...V2,
  Name: 'ext-l2b',
  Type: 'L2Bridge',
  Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 2' } }],
  MacPool: { Ranges: [{ StartMacAddress: '00-15-5D-52-C0-00', EndMacAddress: '00-15-5D-52-CF-FF' }] },
  Ipams: [
    {
      Type: 'Static',
      Subnets: [
        { IpAddressPrefix: '10.10.0.0/24', Routes: [{ NextHop: '10.10.0.1', DestinationPrefix: '0.0.0.0/0' }] },
      ],
    },
  ],
  Dns: { ServerList: ['10.10.0.10'] },
};

describe('networks', () => {
  test('a v2-created L2Bridge network: sample B in v2, lowercase-typed v1 shape for NULL / Major 1 queries and HNSCall', async () => {
    const { c } = fx;
    const id = ok(await c.createNetwork(null, JSON.stringify(SAMPLE_A)));
    expect(id).toMatch(LOWER_GUID);

    const v2 = okJson(await c.queryNetworkProperties(id, Q2));
    expect(v2).toMatchObject({
      ID: id,
      Name: 'ext-l2b',
      Type: 'L2Bridge',
      Policies: SAMPLE_A.Policies,
      MacPool: SAMPLE_A.MacPool,
      Dns: SAMPLE_A.Dns,
      Ipams: SAMPLE_A.Ipams,
      SchemaVersion: { Major: 2, Minor: 0 },
    });
    expect(v2.Health.Extra.LayeredOn).toMatch(UPPER_GUID);
    expect(v2).not.toHaveProperty('Flags'); // zero-valued: omitted
    expect(v2).not.toHaveProperty('Subnets');

    for (const query of [null, '', Q1, JSON.stringify({ Flags: 0 })]) {
      const v1 = okJson(await c.queryNetworkProperties(id, query));
      expect(v1).toMatchObject({
        ID: id,
        Name: 'ext-l2b',
        Type: 'l2bridge',
        NetworkAdapterName: 'Ethernet 2',
        SourceMac: '00-15-5D-AA-00-02',
        MacPools: [{ StartMacAddress: '00-15-5D-52-C0-00', EndMacAddress: '00-15-5D-52-CF-FF' }],
        Subnets: [{ AddressPrefix: '10.10.0.0/24', GatewayAddress: '10.10.0.1', Policies: [] }],
        DNSServerList: '10.10.0.10',
        Flags: 0,
        Policies: [], // NetAdapterName is v1's top-level NetworkAdapterName
        TotalEndpoints: 0,
      });
      expect(v1).not.toHaveProperty('Ipams');
    }

    // v1 sees the same object, whatever the case of the id in the path.
    const viaV1 = output(await c.hnsCall('GET', `/networks/${id.toUpperCase()}`));
    expect(viaV1).toMatchObject({ ID: id, Type: 'l2bridge', Name: 'ext-l2b' });
    const all = output(await c.hnsCall('GET', '/networks/')) as Array<{ ID: string }>;
    expect(all.map((n) => n.ID)).toEqual([id]);
  });

  test('a v1-created NAT network: uppercase id, v1 output, no Type in its v2 view, CreatedBy v1', async () => {
    const { c, sim } = fx;
    const created = output(
      await c.hnsCall(
        'POST',
        '/networks/',
        JSON.stringify({
          Name: 'nat1',
          Type: 'nat',
          Subnets: [
            { AddressPrefix: '172.20.0.0/16', GatewayAddress: '172.20.0.1', Policies: [{ Type: 'VLAN', VLAN: 7 }] },
          ],
          DNSServerList: '10.0.0.10,10.0.0.11',
        }),
      ),
    );
    expect(created.ID).toMatch(UPPER_GUID);
    expect(created).toMatchObject({
      Name: 'nat1',
      Type: 'nat',
      Subnets: [{ GatewayAddress: '172.20.0.1', Policies: [{ Type: 'VLAN', VLAN: 7 }] }],
    });

    const v2 = okJson(await c.queryNetworkProperties(created.ID.toLowerCase(), Q2));
    expect(v2.ID).toBe(created.ID);
    expect(v2).not.toHaveProperty('Type'); // NAT is the zero value of NetworkMode
    expect(v2.Ipams).toEqual([
      {
        Type: 'Static',
        Subnets: [
          {
            IpAddressPrefix: '172.20.0.0/16',
            Policies: [{ Type: 'VLAN', Settings: { IsolationId: 7 } }],
            Routes: [{ NextHop: '172.20.0.1', DestinationPrefix: '0.0.0.0/0' }],
          },
        ],
      },
    ]);
    expect(v2.Dns).toEqual({ ServerList: ['10.0.0.10', '10.0.0.11'] });

    const v2id = ok(await c.createNetwork(null, natNetwork('nat2')));
    const dump = await sim.control.dump();
    expect(dump.networks.map((n) => [n.Name, n.CreatedBy])).toEqual([
      ['nat1', 'v1'],
      ['nat2', 'v2'],
    ]);
    expect(dump.networks[1].ID).toBe(v2id);
  });

  test('v1 JSON handed to HcnCreateNetwork is read as v1 (no SchemaVersion 2.x), the object is still a v2 one', async () => {
    const { c, sim } = fx;
    const id = ok(
      await c.createNetwork(null, JSON.stringify({ Name: 'tr', Type: 'transparent', NetworkAdapterName: 'Ethernet' })),
    );
    expect(id).toMatch(LOWER_GUID);
    const v2 = okJson(await c.queryNetworkProperties(id, Q2));
    expect(v2).toMatchObject({
      Type: 'Transparent',
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
    });
    expect(v2).not.toHaveProperty('Ipams');
    expect((await sim.control.dump()).networks[0].CreatedBy).toBe('v2');
  });

  test('a fixed id is kept (lowercase through v2, uppercase through v1); the settings ID is used with GUID_NULL', async () => {
    const { c } = fx;
    const fixed = '5F0B1190-63BE-4E0C-B974-BD0F55675A42';
    expect(ok(await c.createNetwork(fixed.toLowerCase(), natNetwork('a')))).toBe(fixed.toLowerCase());
    const inner = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    expect(ok(await c.createNetwork(null, natNetwork('b', { ID: inner })))).toBe(inner);
    const v1 = output(
      await c.hnsCall(
        'POST',
        '/networks/',
        JSON.stringify({ ID: '11111111-2222-4333-8444-555555555555', Name: 'c', Type: 'nat' }),
      ),
    );
    expect(v1.ID).toBe('11111111-2222-4333-8444-555555555555'.toUpperCase());
  });

  test('a NAT network without subnets gets a default 172.x/20 with a gateway, and a default Hyper-V MAC pool', async () => {
    const { c } = fx;
    const id = ok(await c.createNetwork(null, natNetwork('nat')));
    const v1 = okJson(await c.queryNetworkProperties(id, null));
    expect(v1.Subnets).toHaveLength(1);
    expect(v1.Subnets[0].AddressPrefix).toMatch(/^172\.\d+\.\d+\.0\/20$/);
    expect(v1.Subnets[0].GatewayAddress).toBe(v1.Subnets[0].AddressPrefix.replace('.0/20', '.1'));
    expect(v1.MacPools).toEqual([{ EndMacAddress: '00-15-5D-51-8F-FF', StartMacAddress: '00-15-5D-51-80-00' }]);
    expect(v1.NatName).toMatch(/^NAT/);
    // A second NAT network does not reuse the range.
    const id2 = ok(await c.createNetwork(null, natNetwork('nat-b')));
    const v1b = okJson(await c.queryNetworkProperties(id2, null));
    expect(v1b.Subnets[0].AddressPrefix).not.toBe(v1.Subnets[0].AddressPrefix);
  });
});

describe('policies', () => {
  test('v1 flat endpoint policies (Azure CNI shapes) read back typed in v2', async () => {
    const { c } = fx;
    const net = output(
      await c.hnsCall(
        'POST',
        '/networks/',
        JSON.stringify({
          Name: 'azure',
          Type: 'l2bridge',
          NetworkAdapterName: 'Ethernet',
          Subnets: [{ AddressPrefix: '10.240.0.0/12', GatewayAddress: '10.240.0.1' }],
        }),
      ),
    );
    const ep = output(
      await c.hnsCall(
        'POST',
        '/endpoints/',
        JSON.stringify({
          Name: 'ep',
          VirtualNetwork: net.ID,
          IPAddress: '10.240.0.50',
          Policies: [
            { Type: 'OutBoundNAT', ExceptionList: ['10.240.0.0/12', '10.0.0.0/8'] },
            { Type: 'ROUTE', DestinationPrefix: '10.0.0.0/16', NeedEncap: true },
            { Type: 'NAT', Protocol: 'tcp', InternalPort: 80, ExternalPort: 8123, VIP: '127.0.0.1' },
            { Type: 'ACL', Protocol: 6, Action: 'Allow', Direction: 'In', LocalPort: 80, Priority: 200 },
            { Type: 'QOS', MaximumOutgoingBandwidthInBytes: 1000000 },
          ],
        }),
      ),
    );
    expect(ep.ID).toMatch(UPPER_GUID);
    const v2 = okJson(await c.queryEndpointProperties(ep.ID, Q2));
    expect(v2.Policies).toEqual([
      { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.240.0.0/12', '10.0.0.0/8'] } },
      { Type: 'SDNRoute', Settings: { DestinationPrefix: '10.0.0.0/16', NeedEncap: true } },
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8123, VIP: '127.0.0.1' } },
      { Type: 'ACL', Settings: { Protocols: '6', Action: 'Allow', Direction: 'In', LocalPorts: '80', Priority: 200 } },
      { Type: 'QOS', Settings: { MaximumOutgoingBandwidthInBytes: 1000000 } },
    ]);
    // …and flat again through v1.
    const v1 = output(await c.hnsCall('GET', `/endpoints/${ep.ID}`));
    expect(v1.Policies).toEqual([
      { Type: 'OutBoundNAT', ExceptionList: ['10.240.0.0/12', '10.0.0.0/8'] },
      { Type: 'ROUTE', DestinationPrefix: '10.0.0.0/16', NeedEncap: true },
      { Type: 'NAT', Protocol: 'tcp', InternalPort: 80, ExternalPort: 8123, VIP: '127.0.0.1' },
      { Type: 'ACL', Protocol: 6, Action: 'Allow', Direction: 'In', LocalPorts: '80', Priority: 200 },
      { Type: 'QOS', MaximumOutgoingBandwidthInBytes: 1000000 },
    ]);
  });

  test('v2 typed endpoint policies read back flat in v1 (udp, VirtualIP, Mtu, VLAN)', async () => {
    const { c } = fx;
    const net = ok(await c.createNetwork(null, l2bridge('n')));
    const ep = ok(
      await c.createEndpoint(
        net,
        null,
        JSON.stringify({
          ...V2,
          Name: 'e',
          Policies: [
            { Type: 'PortMapping', Settings: { Protocol: 17, InternalPort: 53, ExternalPort: 5353 } },
            {
              Type: 'OutBoundNAT',
              Settings: { VirtualIP: '10.10.0.200', Exceptions: ['10.0.0.0/8'], Destinations: ['8.8.8.8'] },
            },
            {
              Type: 'ACL',
              Settings: { Protocols: '17', Action: 'Block', Direction: 'Out', RemoteAddresses: '1.2.3.4' },
            },
            { Type: 'InterfaceParameters', Settings: { Mtu: 1450 } },
            { Type: 'VLAN', Settings: { IsolationId: 12 } },
          ],
        }),
      ),
    );
    const v1 = okJson(await c.queryEndpointProperties(ep, null));
    expect(v1.Policies).toEqual([
      { Type: 'NAT', Protocol: 'udp', InternalPort: 53, ExternalPort: 5353 },
      { Type: 'OutBoundNAT', VIP: '10.10.0.200', ExceptionList: ['10.0.0.0/8'], Destinations: ['8.8.8.8'] },
      { Type: 'ACL', Protocol: 17, Action: 'Block', Direction: 'Out', RemoteAddresses: '1.2.3.4' },
      { Type: 'InterfaceParameters', Mtu: 1450 },
      { Type: 'VLAN', VLAN: 12 },
    ]);
  });

  test('HcnModifyNetwork / HcnModifyEndpoint add, update and remove policies', async () => {
    const { c } = fx;
    const net = ok(await c.createNetwork(null, l2bridge('n')));
    const modify = (rt: string, settings: object) =>
      JSON.stringify({ ResourceType: 'Policy', RequestType: rt, Settings: settings });
    ok(await c.modifyNetwork(net, modify('Add', { Policies: [{ Type: 'VxlanPort', Settings: { Port: 4789 } }] })));
    expect(okJson(await c.queryNetworkProperties(net, Q2)).Policies).toEqual([
      { Type: 'VxlanPort', Settings: { Port: 4789 } },
    ]);
    expectFailure(
      await c.modifyNetwork(net, modify('Add', { Policies: [{ Type: 'VxlanPort', Settings: { Port: 4789 } }] })),
      0x803b0012,
      'Policy information already exists on this object.',
    );
    // Only the resource types hcsshim names (hcn/hcnnetwork.go NetworkResourceType): a Subnet request is refused.
    expectFailure(
      await c.modifyNetwork(
        net,
        JSON.stringify({ ResourceType: 'Subnet', RequestType: 'Add', Settings: { Subnets: [] } }),
      ),
      0x803b0015,
      'The specified request is unsupported.',
    );

    const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
    const pm = { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } };
    ok(await c.modifyEndpoint(ep, modify('Add', { Policies: [pm] })));
    ok(
      await c.modifyEndpoint(
        ep,
        JSON.stringify({
          ResourceType: 'Policy',
          RequestType: 2,
          Settings: { Policies: [{ ...pm, Settings: { ...pm.Settings, ExternalPort: 9090 } }] },
        }),
      ),
    );
    expect(okJson(await c.queryEndpointProperties(ep, Q2)).Policies).toEqual([
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 9090 } },
    ]);
    ok(
      await c.modifyEndpoint(
        ep,
        modify('Remove', {
          Policies: [{ Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 9090 } }],
        }),
      ),
    );
    expect(okJson(await c.queryEndpointProperties(ep, Q2))).not.toHaveProperty('Policies');
    expectFailure(
      await c.modifyEndpoint(ep, modify('Remove', { Policies: [pm] })),
      0x803b0008,
      'An expected policy was not found.',
    );
  });

  test('v1 POST /endpoints/{id} replaces the policy list (hnslib ApplyACLPolicy)', async () => {
    const { c } = fx;
    const net = ok(await c.createNetwork(null, l2bridge('n')));
    const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
    const updated = output(
      await c.hnsCall(
        'POST',
        `/endpoints/${ep}`,
        JSON.stringify({ ID: ep, Policies: [{ Type: 'ACL', Protocol: 6, Action: 'Allow', Direction: 'Out' }] }),
      ),
    );
    expect(updated.Policies).toEqual([{ Type: 'ACL', Protocol: 6, Action: 'Allow', Direction: 'Out' }]);
    expect(okJson(await c.queryEndpointProperties(ep, Q2)).Policies).toEqual([
      { Type: 'ACL', Settings: { Protocols: '6', Action: 'Allow', Direction: 'Out' } },
    ]);
  });
});

describe('enumerate and filters', () => {
  test('filters on v1 field names, GUIDs case-insensitive, [] when nothing matches', async () => {
    const { c } = fx;
    const a = ok(await c.createNetwork(null, natNetwork('net-a', { Flags: 8 })));
    const b = ok(await c.createNetwork(null, natNetwork('net-b')));
    const ea1 = ok(await c.createEndpoint(a, null, JSON.stringify({ ...V2, Name: 'same' })));
    const ea2 = ok(await c.createEndpoint(a, null, JSON.stringify({ ...V2, Name: 'same' }))); // names need not be unique
    const eb = ok(await c.createEndpoint(b, null, JSON.stringify({ ...V2, Name: 'other' })));

    const ids = async (p: Promise<{ hr: number; result: string | null; errorRecord: string | null }>) =>
      JSON.parse(ok(await p)) as string[];
    expect(await ids(c.enumerateNetworks(null))).toEqual([a, b]);
    expect(await ids(c.enumerateNetworks(''))).toEqual([a, b]);
    expect(await ids(c.enumerateNetworks(Q2))).toEqual([a, b]);
    expect(await ids(c.enumerateNetworks(filterQuery({ Name: 'net-b' })))).toEqual([b]);
    expect(await ids(c.enumerateNetworks(filterQuery({ Name: 'Net-B' })))).toEqual([]);
    expect(await ids(c.enumerateNetworks(filterQuery({ Name: 'missing' })))).toEqual([]);
    expect(await ids(c.enumerateNetworks(filterQuery({ ID: a.toUpperCase() })))).toEqual([a]);
    expect(await ids(c.enumerateNetworks(filterQuery({ Flags: 8 })))).toEqual([a]);
    expect(await ids(c.enumerateNetworks(filterQuery({ Flags: 0 }, 1)))).toEqual([b]);
    expect(await ids(c.enumerateEndpoints(filterQuery({ VirtualNetwork: a.toUpperCase() })))).toEqual([ea1, ea2]);
    expect(await ids(c.enumerateEndpoints(filterQuery({ VirtualNetworkName: 'net-b' })))).toEqual([eb]);
    expect(await ids(c.enumerateEndpoints(filterQuery({ Name: 'same', VirtualNetwork: b })))).toEqual([]);
    // v2 field names are not filter keys (hcsshim's TODO in ListEndpointsOfNetwork).
    expect(await ids(c.enumerateEndpoints(filterQuery({ HostComputeNetwork: a })))).toEqual([]);
  });

  test('unparsable query or Filter is HCN_E_INVALID_JSON', async () => {
    const { c } = fx;
    const msg = 'Invalid JSON document string.';
    expectFailure(await c.enumerateNetworks('{"SchemaVersion":'), 0x803b001b, msg);
    expectFailure(await c.enumerateNetworks(JSON.stringify({ ...V2, Filter: '{"Name":' })), 0x803b001b, msg);
    expectFailure(await c.enumerateEndpoints(JSON.stringify({ ...V2, Filter: '[1]' })), 0x803b001b, msg);
    const id = ok(await c.createNetwork(null, natNetwork('n')));
    expectFailure(await c.queryNetworkProperties(id, 'not json'), 0x803b001b, msg);
  });
});
