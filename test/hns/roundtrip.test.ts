/**
 * hcn.node + libhcnsim.so + hcn-sim, through the facade: every native HCN entry point in a round trip, the v1
 * HNSCall paths the plugin uses, and native.stats() proving each C function of the list was reached by the shared
 * lifecycle (test/helpers/hcn-lifecycle.js, which the wine probe runs too) and that each call that crosses the wire
 * arrived at the simulator exactly once.
 */
import type { NativeHcn, NativeStats } from '../../src/hns/native-types';
import type { HostComputeEndpoint, HostComputeNamespace } from '../../src/hns/schema';
import { GUID_NULL, LOWER_GUID, describeError, l2bridge, nat, rejectionOf, useHcn } from './helpers';
import { HCN_FUNCTION_TABLE, functionsIn, LOCAL_ONLY } from '../helpers/hcn-functions';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain CommonJS, shared with the wine probe
const { runLifecycle } = require('../helpers/hcn-lifecycle') as {
  runLifecycle(native: NativeHcn, options: { container: string; name?: string }): Promise<void>;
};

const fx = useHcn();

const NET_ID = '5f0b1190-63be-4e0c-b974-bd0f55675a42';
const EP_ID = 'a3c1e0b4-6a0e-4f37-9d0e-7c1e0f6f2b11';
const NS_ID = '2c094b9e-af3a-4dc1-97d8-821b68603d23';

const endpoint = (name: string, ip?: string, extra: HostComputeEndpoint = {}): HostComputeEndpoint => ({
  Name: name,
  ...(ip ? { IpConfigurations: [{ IpAddress: ip, PrefixLength: 24 }] } : {}),
  ...extra,
});

describe('networks', () => {
  test('create with a chosen id and with GUID_NULL; enumerate with filters; get; [] on no match', async () => {
    const { hcn } = fx;
    const fixed = await hcn.createNetwork(l2bridge('net-fixed', '10.10.0.0/24', '10.10.0.1'), NET_ID);
    expect(fixed).toMatchObject({
      ID: NET_ID,
      Name: 'net-fixed',
      Type: 'L2Bridge',
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            { IpAddressPrefix: '10.10.0.0/24', Routes: [{ NextHop: '10.10.0.1', DestinationPrefix: '0.0.0.0/0' }] },
          ],
        },
      ],
      SchemaVersion: { Major: 2, Minor: 0 },
    });
    // GUID_NULL, spelled out or left out: HNS assigns the id and the create's query returns it.
    const assigned = await hcn.createNetwork(nat('net-assigned', '172.30.0.0/24'), GUID_NULL);
    expect(assigned.ID).toMatch(LOWER_GUID);
    expect(assigned.ID).not.toBe(GUID_NULL);
    expect(assigned.Type).toBeUndefined(); // NAT is the zero enum: omitted in v2 output
    const assigned2 = await hcn.createNetwork(nat('net-assigned-2', '172.31.0.0/24'));
    expect(assigned2.ID).toMatch(LOWER_GUID);
    expect(new Set([fixed.ID, assigned.ID, assigned2.ID]).size).toBe(3);

    expect((await hcn.enumerateNetworks()).sort()).toEqual([NET_ID, assigned.ID!, assigned2.ID!].sort());
    expect(await hcn.enumerateNetworks({ Name: 'net-assigned' })).toEqual([assigned.ID]);
    expect(await hcn.enumerateNetworks({ ID: NET_ID.toUpperCase() })).toEqual([NET_ID]); // GUIDs compare case-insensitively
    expect(await hcn.enumerateNetworks({ Type: 'nat' })).toEqual([assigned.ID, assigned2.ID]); // v1 field names and values
    expect(await hcn.enumerateNetworks({ Name: 'no-such-network' })).toEqual([]);
    expect(await hcn.enumerateNetworks({ Name: 'net-fixed', Type: 'nat' })).toEqual([]); // every condition must hold

    expect(await hcn.getNetwork(NET_ID.toUpperCase())).toEqual(fixed);
    expect(await hcn.findNetworkByName('net-assigned-2')).toEqual(assigned2);
    expect(await hcn.findNetworkByName('nope')).toBeUndefined();
  });

  test('listNetworks (listNetworksDetailed): one native call, each document as getNetwork returns it', async () => {
    const { hcn } = fx;
    const a = await hcn.createNetwork(nat('list-a', '172.20.1.0/24'));
    const b = await hcn.createNetwork(nat('list-b', '172.20.2.0/24'));
    expect(await hcn.listNetworks()).toEqual([a, b]);
    expect(await hcn.listNetworks({ Name: 'list-b' })).toEqual([b]);
    expect(await hcn.listNetworks({ Name: 'list-c' })).toEqual([]);
    // The raw native call with a NULL query: the v1 shape (lowercase type, Subnets), as WSL reads it.
    const v1 = JSON.parse(await hcn.native.listNetworksDetailed(null)) as Array<Record<string, any>>;
    expect(v1.map((n) => [n.ID, n.Type, n.Subnets[0].AddressPrefix])).toEqual([
      [a.ID, 'nat', '172.20.1.0/24'],
      [b.ID, 'nat', '172.20.2.0/24'],
    ]);
    expect(JSON.parse(await hcn.native.getNetworkProperties(a.ID!, null))).toMatchObject({
      ID: a.ID,
      Type: 'nat',
      Name: 'list-a',
    });
  });

  test('modify: policy add, then remove; delete; the deleted network is not found', async () => {
    const { hcn } = fx;
    const n = await hcn.createNetwork(l2bridge('net-mod'));
    await hcn.modifyNetwork(n.ID!, {
      ResourceType: 'Policy',
      RequestType: 'Add',
      Settings: { Policies: [{ Type: 'VxlanPort', Settings: { Port: 4789 } }] },
    });
    expect((await hcn.getNetwork(n.ID!)).Policies).toEqual([{ Type: 'VxlanPort', Settings: { Port: 4789 } }]);
    await hcn.modifyNetwork(n.ID!, {
      ResourceType: 'Policy',
      RequestType: 'Remove',
      Settings: { Policies: [{ Type: 'VxlanPort', Settings: { Port: 4789 } }] },
    });
    expect((await hcn.getNetwork(n.ID!)).Policies).toBeUndefined(); // empty lists are omitted
    await hcn.deleteNetwork(n.ID!);
    expect(await hcn.enumerateNetworks()).toEqual([]);
    expect(describeError(await rejectionOf(hcn.getNetwork(n.ID!)))).toMatchObject({
      op: 'HcnOpenNetwork',
      hresult: '0x803B0001',
      isNotFound: true,
    });
  });
});

describe('endpoints', () => {
  test('create (chosen id / GUID_NULL), enumerate with filters, get, modify policies, listEndpoints*, delete', async () => {
    const { hcn } = fx;
    const net = await hcn.createNetwork(l2bridge('ep-net', '10.10.0.0/24', '10.10.0.1'));
    const other = await hcn.createNetwork(nat('ep-other', '172.22.0.0/24'));
    const e1 = await hcn.createEndpoint(
      net.ID!,
      endpoint('ep-1', '10.10.0.21', { Dns: { ServerList: ['10.10.0.10'] } }),
      EP_ID,
    );
    expect(e1).toMatchObject({
      ID: EP_ID,
      Name: 'ep-1',
      HostComputeNetwork: net.ID,
      IpConfigurations: [{ IpAddress: '10.10.0.21', PrefixLength: 24 }],
      Dns: { ServerList: ['10.10.0.10'] },
      Routes: [{ NextHop: '10.10.0.1', DestinationPrefix: '0.0.0.0/0' }], // the subnet's gateway, filled in by HNS
      MacAddress: expect.stringMatching(/^00-15-5D-[0-9A-F]{2}-[0-9A-F]{2}-[0-9A-F]{2}$/),
    });
    const e2 = await hcn.createEndpoint(net.ID!, endpoint('ep-2'), GUID_NULL);
    expect(e2.ID).toMatch(LOWER_GUID);
    expect(e2.IpConfigurations).toEqual([{ IpAddress: '10.10.0.2', PrefixLength: 24 }]); // first free, gateway skipped
    expect(e2.MacAddress).not.toBe(e1.MacAddress);
    const e3 = await hcn.createEndpoint(other.ID!, endpoint('ep-3'));

    expect(await hcn.enumerateEndpoints()).toEqual([EP_ID, e2.ID, e3.ID]);
    expect(await hcn.enumerateEndpoints({ VirtualNetwork: net.ID!.toUpperCase() })).toEqual([EP_ID, e2.ID]);
    expect(await hcn.enumerateEndpoints({ Name: 'ep-3' })).toEqual([e3.ID]);
    expect(await hcn.enumerateEndpoints({ Name: 'ep-9' })).toEqual([]);
    expect(await hcn.getEndpoint(e2.ID!)).toEqual(e2);
    expect(await hcn.listEndpoints()).toEqual([e1, e2, e3]);
    expect(await hcn.listEndpointsOfNetwork(other.ID!)).toEqual([e3]);
    expect(await hcn.listEndpoints({ VirtualNetworkName: 'ep-net', IPAddress: '10.10.0.21' })).toEqual([e1]);
    expect(await hcn.listEndpoints({ Name: 'ep-9' })).toEqual([]);

    const outbound = { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } };
    await hcn.modifyEndpoint(EP_ID, { ResourceType: 'Policy', RequestType: 'Add', Settings: { Policies: [outbound] } });
    expect((await hcn.getEndpoint(EP_ID)).Policies).toEqual([outbound]);
    await hcn.modifyEndpoint(EP_ID, {
      ResourceType: 'Policy',
      RequestType: 'Remove',
      Settings: { Policies: [outbound] },
    });
    expect((await hcn.getEndpoint(EP_ID)).Policies).toBeUndefined();

    await hcn.deleteEndpoint(e2.ID!);
    expect(await hcn.enumerateEndpoints({ VirtualNetwork: net.ID! })).toEqual([EP_ID]);
    expect(describeError(await rejectionOf(hcn.getEndpoint(e2.ID!)))).toMatchObject({
      op: 'HcnOpenEndpoint',
      hresult: '0x803B0002',
    });
    // Deleting the network cascades (the default host) to its endpoints.
    await hcn.deleteNetwork(net.ID!);
    expect(await hcn.enumerateEndpoints()).toEqual([e3.ID]);
  });
});

describe('namespaces', () => {
  test('create, enumerate, get, add/remove an endpoint, listNamespaces, delete', async () => {
    const { hcn } = fx;
    const net = await hcn.createNetwork(l2bridge('ns-net'));
    const ep = await hcn.createEndpoint(net.ID!, endpoint('ns-ep'));
    const ns = await hcn.createNamespace({ Type: 'HostDefault', NamespaceId: 5 }, NS_ID);
    expect(ns).toEqual({ ID: NS_ID, NamespaceId: 5, Type: 'HostDefault', SchemaVersion: { Major: 2, Minor: 0 } });
    const ns2 = await hcn.createNamespace();
    expect(ns2).toEqual({
      ID: expect.stringMatching(LOWER_GUID),
      NamespaceId: 6,
      SchemaVersion: { Major: 2, Minor: 0 },
    });

    // The facade has no enumerateNamespaces: the raw native call, with and without a filter.
    expect(JSON.parse(await hcn.native.enumerateNamespaces(null))).toEqual([NS_ID, ns2.ID]);
    expect(
      JSON.parse(
        await hcn.native.enumerateNamespaces(
          JSON.stringify({ SchemaVersion: { Major: 2, Minor: 0 }, Filter: JSON.stringify({ ID: ns2.ID }) }),
        ),
      ),
    ).toEqual([ns2.ID]);
    expect(
      JSON.parse(
        await hcn.native.enumerateNamespaces(
          JSON.stringify({ SchemaVersion: { Major: 2, Minor: 0 }, Filter: '{"ID":"' + EP_ID + '"}' }),
        ),
      ),
    ).toEqual([]);

    await hcn.addNamespaceEndpoint(NS_ID, ep.ID!);
    // HNS lists a namespace's endpoints in upper case (microsoft/hcsshim cmd/ncproxy/hcn_networking_test.go), the
    // endpoint itself keeps the lowercase id HCN gave it.
    expect(ep.ID).toBe(ep.ID!.toLowerCase());
    expect(await hcn.getNamespace(NS_ID)).toMatchObject({
      Resources: [{ Type: 'Endpoint', Data: { Id: ep.ID!.toUpperCase() } }],
    });
    expect((await hcn.getEndpoint(ep.ID!)).HostComputeNamespace).toBe(NS_ID);
    const listed: HostComputeNamespace[] = await hcn.listNamespaces();
    expect(listed.map((n) => [n.ID, n.Resources?.length ?? 0])).toEqual([
      [NS_ID, 1],
      [ns2.ID, 0],
    ]);
    expect(await hcn.listNamespaces({ ID: ns2.ID!.toUpperCase() })).toEqual([ns2]);
    expect(await hcn.listNamespaces({ ID: EP_ID })).toEqual([]);

    await hcn.removeNamespaceEndpoint(NS_ID, ep.ID!);
    expect((await hcn.getNamespace(NS_ID)).Resources).toBeUndefined();
    expect((await hcn.getEndpoint(ep.ID!)).HostComputeNamespace).toBeUndefined();

    await hcn.deleteNamespace(NS_ID);
    expect(describeError(await rejectionOf(hcn.getNamespace(NS_ID)))).toMatchObject({
      op: 'HcnOpenNamespace',
      hresult: '0x80070490',
      isNotFound: true,
    });
    expect(await hcn.listNamespaces()).toEqual([ns2]);
  });
});

describe('HNS v1 (HNSCall) paths the plugin uses', () => {
  test('GET /globals/version, and version() on top of it', async () => {
    const { hcn, control } = fx;
    expect(await hcn.hnsCall('GET', '/globals/version')).toEqual({ Major: 15, Minor: 4 });
    await control.setVersion(9, 3);
    expect(await hcn.version()).toEqual({ major: 9, minor: 3 });
  });

  test('networks, endpoints, attach/detach, namespaces with add/removeresource, deletes', async () => {
    const { hcn } = fx;
    // POST /networks/ (docker's lowercase type, v1 subnets)
    const net = await hcn.hnsCall<Record<string, any>>('POST', '/networks/', {
      Name: 'v1-net',
      Type: 'l2bridge',
      NetworkAdapterName: 'Ethernet 2',
      Subnets: [{ AddressPrefix: '10.20.0.0/24', GatewayAddress: '10.20.0.1' }],
    });
    expect(net).toMatchObject({
      Name: 'v1-net',
      Type: 'l2bridge',
      NetworkAdapterName: 'Ethernet 2',
      SourceMac: '00-15-5D-AA-00-02',
    });
    expect(net.ID).toMatch(/^[0-9A-F-]{36}$/); // v1 ids are uppercase
    // V1Api passes a chosen id inside the body: HNS keeps it (in v1's uppercase).
    const chosen = await hcn.hnsCall<Record<string, any>>('POST', '/networks/', {
      ID: NET_ID,
      Name: 'v1-chosen',
      Type: 'nat',
    });
    expect(chosen.ID).toBe(NET_ID.toUpperCase());
    await hcn.hnsCall('DELETE', `/networks/${NET_ID}`);
    expect((await hcn.hnsCall<any[]>('GET', '/networks/')).map((n) => n.ID)).toEqual([net.ID]);
    expect(await hcn.hnsCall('GET', `/networks/${net.ID}`)).toMatchObject({
      ID: net.ID,
      Subnets: [{ AddressPrefix: '10.20.0.0/24', GatewayAddress: '10.20.0.1' }],
    });

    // POST /endpoints/
    const ep = await hcn.hnsCall<Record<string, any>>('POST', '/endpoints/', {
      Name: 'v1-ep',
      VirtualNetwork: net.ID,
      IPAddress: '10.20.0.5',
      PrefixLength: 24,
      GatewayAddress: '10.20.0.1',
      DNSServerList: '10.20.0.10,10.20.0.11',
    });
    expect(ep).toMatchObject({
      Name: 'v1-ep',
      VirtualNetwork: net.ID,
      VirtualNetworkName: 'v1-net',
      IPAddress: '10.20.0.5',
      GatewayAddress: '10.20.0.1',
      State: 1,
    });
    expect((await hcn.hnsCall<any[]>('GET', '/endpoints/')).map((e) => e.ID)).toEqual([ep.ID]);

    // POST /endpoints/{id}/attach and detach (Docker-style containers)
    await expect(
      hcn.hnsCall('POST', `/endpoints/${ep.ID}/attach`, { ContainerId: 'c0ffee', SystemType: 'Container' }),
    ).resolves.toBeUndefined();
    expect(await hcn.hnsCall('GET', `/endpoints/${ep.ID}`)).toMatchObject({ SharedContainers: ['c0ffee'], State: 2 });
    await hcn.hnsCall('POST', `/endpoints/${ep.ID}/detach`, { ContainerId: 'c0ffee', SystemType: 'Container' });
    expect(await hcn.hnsCall('GET', `/endpoints/${ep.ID}`)).toMatchObject({ SharedContainers: [], State: 4 });

    // POST /namespaces/, addresource, removeresource
    const ns = await hcn.hnsCall<Record<string, any>>('POST', '/namespaces/', {});
    expect(ns).toMatchObject({ ID: expect.stringMatching(/^[0-9A-F-]{36}$/), IsDefault: false, ResourceList: [] });
    expect((await hcn.hnsCall<any[]>('GET', '/namespaces/')).map((n) => n.ID)).toEqual([ns.ID]);
    const added = await hcn.hnsCall('POST', `/namespaces/${ns.ID}/addresource`, {
      Type: 'Endpoint',
      Data: { Id: ep.ID },
    });
    // The same upper-case list through v1 (src/sim/views.ts resourcesOf).
    expect(added).toMatchObject({ ResourceList: [{ Type: 'Endpoint', Data: { Id: String(ep.ID).toUpperCase() } }] });
    expect(await hcn.hnsCall('GET', `/endpoints/${ep.ID}`)).toMatchObject({ Namespace: { ID: ns.ID } });
    await hcn.hnsCall('POST', `/namespaces/${ns.ID}/removeresource`, { Type: 'Endpoint', Data: { Id: ep.ID } });
    expect(await hcn.hnsCall('GET', `/namespaces/${ns.ID}`)).toMatchObject({ ID: ns.ID, ResourceList: [] });

    // DELETEs, then each GET is not-found, named after the v1 path with {id}
    await hcn.hnsCall('DELETE', `/namespaces/${ns.ID}`);
    await hcn.hnsCall('DELETE', `/endpoints/${ep.ID}`);
    await hcn.hnsCall('DELETE', `/networks/${net.ID}`);
    for (const [coll, hr] of [
      ['networks', '0x803B0001'],
      ['endpoints', '0x803B0002'],
      ['namespaces', '0x80070490'],
    ] as const) {
      const id = coll === 'networks' ? net.ID : coll === 'endpoints' ? ep.ID : ns.ID;
      expect(describeError(await rejectionOf(hcn.hnsCall('GET', `/${coll}/${id}`)))).toMatchObject({
        op: `HNSCall GET /${coll}/{id}`,
        hresult: hr,
        isNotFound: true,
      });
    }
    expect(await hcn.hnsCall('GET', '/networks/')).toEqual([]);
  });

  test('listAdapters: the simulated host adapters, normalised by the facade', async () => {
    const { hcn, control } = fx;
    expect(await hcn.listAdapters()).toEqual([
      {
        name: 'Ethernet',
        physical: true,
        mac: '00-15-5D-AA-00-01',
        description: expect.any(String),
        index: expect.any(Number),
        interfaceGuid: expect.stringMatching(/^\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}$/),
      },
      {
        name: 'Ethernet 2',
        physical: true,
        mac: '00-15-5D-AA-00-02',
        description: expect.any(String),
        index: expect.any(Number),
        interfaceGuid: expect.stringMatching(/^\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}$/),
      },
    ]);
    await control.addAdapter({ Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' });
    expect((await hcn.listAdapters()).map((a) => `${a.name}=${a.mac}`)).toEqual([
      'Ethernet=00-15-5D-AA-00-01',
      'Ethernet 2=00-15-5D-AA-00-02',
      'Ethernet 3=00-15-5D-AA-00-03',
    ]);
    await control.removeAdapter('Ethernet 3');
  });
});

describe('calls by name (Hcn.callQuery and its siblings)', () => {
  test("a family's own functions called by name answer as the facade's methods do; a failure names the failing call", async () => {
    const { hcn } = fx;
    const net = await hcn.createNetwork(l2bridge('by-name', '10.10.0.0/24', '10.10.0.1'));
    const ep = await hcn.createEndpoint(net.ID!, endpoint('by-name-ep', '10.10.0.7'));
    expect(await hcn.callQuery<HostComputeEndpoint>('HcnQueryEndpointProperties', ep.ID!)).toEqual(ep);
    expect(await hcn.callEnumerate('HcnEnumerateEndpoints', { Name: 'by-name-ep' })).toEqual([ep.ID]);
    const policy = { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } };
    await hcn.callModify('HcnModifyEndpoint', ep.ID!, {
      ResourceType: 'Policy',
      RequestType: 'Add',
      Settings: { Policies: [policy] },
    });
    expect((await hcn.getEndpoint(ep.ID!)).Policies).toEqual([policy]);
    await hcn.callDelete('HcnDeleteEndpoint', ep.ID!);
    expect(describeError(await rejectionOf(hcn.callQuery('HcnQueryEndpointProperties', ep.ID!)))).toMatchObject({
      op: 'HcnOpenEndpoint',
      isNotFound: true,
    });
    await hcn.deleteNetwork(net.ID!);
  });
});

describe('native.stats()', () => {
  // Function names the addon resolves (native/include/hcn_functions.h); CoTaskMemFree is counted apart (frees).
  const HCN_FUNCTIONS = functionsIn('HCN', 'V1', 'HCS', 'SIM');

  function delta(before: NativeStats, after: NativeStats): Record<string, number> {
    return Object.fromEntries(Object.keys(after.calls).map((k) => [k, after.calls[k] - (before.calls[k] ?? 0)]));
  }

  test('the shared lifecycle (test/helpers/hcn-lifecycle.js) reaches every function of the list, and every wire call arrives exactly once', async () => {
    const { hcn, control } = fx;
    // HCS hot attach needs a compute system HCS knows.
    await control.addContainer('stats-ctr');
    const before = hcn.native.stats();
    // Every function of the list, each reached (stats are per process: compare deltas).
    await runLifecycle(hcn.native, { container: 'stats-ctr', name: 'stats' });
    const after = hcn.native.stats();

    const d = delta(before, after);
    expect(Object.keys(after.calls).sort()).toEqual([...HCN_FUNCTIONS].sort());
    expect(HCN_FUNCTIONS.filter((f) => !(d[f] > 0))).toEqual([]);
    // Every handle opened or created was closed: Open + Create (one handle each; creating an endpoint also opens
    // its network) equals Close, per kind.
    expect(d.HcnCloseNetwork).toBe(d.HcnOpenNetwork + d.HcnCreateNetwork);
    expect(d.HcnCloseEndpoint).toBe(d.HcnOpenEndpoint + d.HcnCreateEndpoint);
    expect(d.HcnCloseNamespace).toBe(d.HcnOpenNamespace + d.HcnCreateNamespace);
    expect(d.HcsCloseComputeSystem).toBe(d.HcsOpenComputeSystem);
    // Every returned string freed: one per call of a function that returns one (a query, an enumeration, HNSCall,
    // the adapter list: returnsText, read from the list's parameters), and no error record in a lifecycle that
    // succeeds.
    const returning = HCN_FUNCTION_TABLE.filter((f) => f.returnsText).reduce((n, f) => n + d[f.name]!, 0);
    expect(HCN_FUNCTION_TABLE.filter((f) => f.returnsText).map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'HcnQueryNetworkProperties',
        'HcnEnumerateEndpoints',
        'HNSCall',
        'HcnSimEnumerateAdapters',
      ]),
    );
    expect(after.frees - before.frees).toBe(returning);

    // The simulator saw each forwarded call exactly once (its counters were reset before this test).
    const sim = (await control.stats()).calls;
    const simHnsCalls = Object.entries(sim)
      .filter(([op]) => op.startsWith('HNSCall '))
      .reduce((n, [, c]) => n + c, 0);
    for (const f of HCN_FUNCTIONS.filter((x) => !LOCAL_ONLY.has(x) && x !== 'HNSCall'))
      expect([f, sim[f] ?? 0]).toEqual([f, d[f]]);
    expect(simHnsCalls).toBe(d.HNSCall);
  });
});
