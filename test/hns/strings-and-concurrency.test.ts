/**
 * What crosses the C ABI as UTF-16 and the wire as UTF-8 comes back unchanged (Unicode names, JSON-special
 * characters, long names); many calls in flight at once each get their own answer; one object store seen through
 * HCN (v2) and HNSCall (v1) in both directions.
 */
import type { HostComputeNetwork } from '../../src/hns/schema';
import { LOWER_GUID, UPPER_GUID, l2bridge, nat, useHcn } from './helpers';

const fx = useHcn();

describe('names through UTF-16 (addon, C ABI) and UTF-8 (wire)', () => {
  const COMBINING = 'cafe\u0301'; // "café" with a combining acute: must not be normalised to the precomposed form
  const PRECOMPOSED = 'caf\u00e9';
  const names: Array<[string, string]> = [
    ['CJK, emoji (a surrogate pair) and ñ', '网络-🚀-ñ'],
    ['combining character (NFD)', COMBINING],
    ['precomposed twin (NFC)', PRECOMPOSED],
    ['200 characters, astral ones included', ('ネットワーク𝔑' + 'x'.repeat(12)).repeat(10)],
    ['JSON-special characters', 'q"uote\\back\nline\ttab/slash\u0001'],
    ['right-to-left and zero-width joiner', 'שלום-👩\u200d💻'],
  ];

  test.each(names)('%s: create → enumerate by Name filter → get → list', async (_label, name) => {
    const { hcn } = fx;
    if (name.length >= 200) expect(name).toHaveLength(200);
    const created = await hcn.createNetwork(nat(name, '172.16.0.0/24'));
    expect(created.Name).toBe(name);
    const ids = await hcn.enumerateNetworks({ Name: name });
    expect(ids).toEqual([created.ID]);
    expect((await hcn.getNetwork(ids[0])).Name).toBe(name);
    expect((await hcn.listNetworks({ Name: name })).map((n) => n.Name)).toEqual([name]);
    // and through v1
    expect((await hcn.hnsCall<{ Name: string }>('GET', `/networks/${created.ID}`)).Name).toBe(name);
    // An endpoint name takes the same path.
    const ep = await hcn.createEndpoint(created.ID!, { Name: name });
    expect((await hcn.listEndpoints({ Name: name })).map((e) => [e.ID, e.Name])).toEqual([[ep.ID, name]]);
  });

  test('NFC and NFD spellings are two different names, each found only by itself', async () => {
    const { hcn } = fx;
    const a = await hcn.createNetwork(nat(COMBINING, '172.16.1.0/24'));
    const b = await hcn.createNetwork(nat(PRECOMPOSED, '172.16.2.0/24'));
    expect(await hcn.enumerateNetworks({ Name: COMBINING })).toEqual([a.ID]);
    expect(await hcn.enumerateNetworks({ Name: PRECOMPOSED })).toEqual([b.ID]);
    expect(await hcn.enumerateNetworks({ Name: 'cafe' })).toEqual([]);
  });

  test("an unpaired surrogate: escaped by the facade's JSON (lossless), U+FFFD when raw text crosses the ABI", async () => {
    const { hcn } = fx;
    // JSON.stringify writes a lone surrogate as the escape \ud800 (ASCII), so it reaches HNS and comes back intact.
    const escaped = await hcn.createNetwork(nat('lone-\ud800-x', '172.16.3.0/24'));
    expect(escaped.Name).toBe('lone-\ud800-x');
    expect(await hcn.enumerateNetworks({ Name: 'lone-\ud800-x' })).toEqual([escaped.ID]);
    // Raw UTF-16 with a lone surrogate in the settings text: the client library converts it to U+FFFD
    // (docs/sim-protocol.md), so what HNS stores is the replacement character.
    const raw = '{"SchemaVersion":{"Major":2,"Minor":0},"Name":"raw-\ud800-x","Type":"Private"}';
    expect(raw.charCodeAt(raw.indexOf('raw-') + 4)).toBe(0xd800);
    const created = JSON.parse(await hcn.native.createNetwork(null, raw, null)) as { ID: string; Name: string };
    expect(created.Name).toBe('raw-\ufffd-x');
    expect(await hcn.enumerateNetworks({ Name: 'raw-\ufffd-x' })).toEqual([created.ID]);
  });

  test('a large document (a 1 MB policy value) survives both directions', async () => {
    const { hcn } = fx;
    const big = 'ü'.repeat(500_000);
    const n = await hcn.createNetwork(l2bridge('big'));
    await hcn.modifyNetwork(n.ID!, {
      ResourceType: 'Policy',
      RequestType: 'Add',
      Settings: { Policies: [{ Type: 'SetPolicy', Settings: { Id: 'big', Values: big } }] },
    });
    const back = await hcn.getNetwork(n.ID!);
    expect((back.Policies?.[0]?.Settings as { Values: string }).Values).toBe(big);
  });
});

describe('concurrency', () => {
  test('100 calls in flight at once (creates of networks and endpoints, gets, enumerates, lists) all resolve correctly', async () => {
    const { hcn, control } = fx;
    const base = await hcn.createNetwork(l2bridge('base', '10.50.0.0/16', '10.50.0.1'));
    const calls: Array<Promise<() => void>> = [];
    for (let i = 0; i < 100; i++) {
      switch (i % 5) {
        case 0: {
          const name = `par-net-${i}`;
          calls.push(
            hcn
              .createNetwork(nat(name, `172.${16 + (i % 16)}.${i}.0/24`))
              .then((n) => () => expect([n.Name, n.ID]).toEqual([name, expect.stringMatching(LOWER_GUID)])),
          );
          break;
        }
        case 1: {
          const name = `par-ep-${i}`;
          calls.push(
            hcn
              .createEndpoint(base.ID!, { Name: name })
              .then((e) => () => expect([e.Name, e.HostComputeNetwork]).toEqual([name, base.ID])),
          );
          break;
        }
        case 2:
          calls.push(hcn.getNetwork(base.ID!).then((n) => () => expect(n).toEqual(base)));
          break;
        case 3:
          calls.push(hcn.enumerateNetworks({ Name: 'base' }).then((ids) => () => expect(ids).toEqual([base.ID])));
          break;
        default:
          calls.push(hcn.listNetworks({ ID: base.ID! }).then((list) => () => expect(list).toEqual([base])));
      }
    }
    const settled = await Promise.allSettled(calls);
    expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
    for (const s of settled) if (s.status === 'fulfilled') s.value();

    // Nothing lost, nothing doubled: 20 networks + base, 20 endpoints with distinct addresses and MACs.
    const nets = await hcn.listNetworks();
    expect(nets).toHaveLength(21);
    expect(new Set(nets.map((n) => n.Name)).size).toBe(21);
    const eps = await hcn.listEndpointsOfNetwork(base.ID!);
    expect(eps).toHaveLength(20);
    expect(new Set(eps.map((e) => e.IpConfigurations?.[0]?.IpAddress)).size).toBe(20);
    expect(new Set(eps.map((e) => e.MacAddress)).size).toBe(20);
    const stats = await control.stats();
    expect(stats.calls.HcnCreateNetwork).toBe(20 + 1);
    expect(stats.calls.HcnCreateEndpoint).toBe(20);
  });

  test('50 concurrent creates of one name: exactly one wins, 49 get HCN_E_NETWORK_ALREADY_EXISTS', async () => {
    const { hcn } = fx;
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => hcn.createNetwork(nat('contended', '172.17.0.0/24'))),
    );
    const won = results.filter((r): r is PromiseFulfilledResult<HostComputeNetwork> => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(new Set(lost.map((r) => (r.reason as { hresult: number }).hresult))).toEqual(new Set([0x803b0010]));
    expect(await hcn.enumerateNetworks({ Name: 'contended' })).toEqual([won[0].value.ID]);
  });
});

describe('v1 and v2 views of one object', () => {
  test('created through HCN (v2), read through HNSCall (v1)', async () => {
    const { hcn } = fx;
    const net = await hcn.createNetwork(
      l2bridge('v2-made', '10.30.0.0/24', '10.30.0.1', {
        Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 2' } }],
        Dns: { ServerList: ['10.30.0.10', '10.30.0.11'] },
        Flags: 8,
      }),
    );
    expect(net.ID).toMatch(LOWER_GUID); // v2-created ids are lowercase
    const ep = await hcn.createEndpoint(net.ID!, {
      Name: 'v2-ep',
      IpConfigurations: [{ IpAddress: '10.30.0.5', PrefixLength: 24 }],
    });

    // v1 path with the id upper-cased: the lookup is case-insensitive, the answer keeps the stored (lowercase) id.
    const v1 = await hcn.hnsCall<Record<string, any>>('GET', `/networks/${net.ID!.toUpperCase()}`);
    expect(v1).toMatchObject({
      ID: net.ID,
      Name: 'v2-made',
      Type: 'l2bridge', // v1: lowercase type
      Flags: 8,
      NetworkAdapterName: 'Ethernet 2',
      SourceMac: '00-15-5D-AA-00-02',
      DNSServerList: '10.30.0.10,10.30.0.11',
      Subnets: [{ AddressPrefix: '10.30.0.0/24', GatewayAddress: '10.30.0.1' }],
      MacPools: [
        {
          StartMacAddress: net.MacPool!.Ranges[0].StartMacAddress,
          EndMacAddress: net.MacPool!.Ranges[0].EndMacAddress,
        },
      ],
      CurrentEndpointCount: 1,
    });
    expect(v1.Ipams).toBeUndefined(); // no v2 fields in the v1 shape
    expect(v1.Policies).toEqual([]); // NetAdapterName is the top-level NetworkAdapterName in v1
    const v1ep = await hcn.hnsCall<Record<string, any>>('GET', `/endpoints/${ep.ID}`);
    expect(v1ep).toMatchObject({
      ID: ep.ID,
      VirtualNetwork: net.ID,
      VirtualNetworkName: 'v2-made',
      IPAddress: '10.30.0.5',
      PrefixLength: 24,
      MacAddress: ep.MacAddress,
      GatewayAddress: '10.30.0.1',
    });
    expect(String(v1ep.VirtualNetwork).toLowerCase()).toBe(net.ID!.toLowerCase());
    expect((await hcn.hnsCall<Array<{ ID: string }>>('GET', '/networks/')).map((n) => n.ID)).toEqual([net.ID]);
  });

  test('created through HNSCall (v1), read through HCN (v2) queries', async () => {
    const { hcn } = fx;
    const v1 = await hcn.hnsCall<Record<string, any>>('POST', '/networks/', {
      Name: 'v1-made',
      Type: 'L2Bridge',
      NetworkAdapterName: 'Ethernet',
      DNSServerList: '10.40.0.10',
      Subnets: [{ AddressPrefix: '10.40.0.0/24', GatewayAddress: '10.40.0.1' }],
    });
    expect(v1.ID).toMatch(UPPER_GUID); // v1-created ids are uppercase
    expect(v1.Type).toBe('l2bridge');

    // Enumerate by Name; get with the id in the other case.
    expect(await hcn.enumerateNetworks({ Name: 'v1-made' })).toEqual([v1.ID]);
    const v2 = await hcn.getNetwork(v1.ID.toLowerCase());
    expect(v2).toMatchObject({
      ID: v1.ID,
      Name: 'v1-made',
      Type: 'L2Bridge', // v2: the enum name
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
      Dns: { ServerList: ['10.40.0.10'] },
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            { IpAddressPrefix: '10.40.0.0/24', Routes: [{ NextHop: '10.40.0.1', DestinationPrefix: '0.0.0.0/0' }] },
          ],
        },
      ],
    });
    expect(v2.Subnets).toBeUndefined();
    expect(v2.ID!.toLowerCase()).toBe(String(v1.ID).toLowerCase());

    const ep = await hcn.hnsCall<Record<string, any>>('POST', '/endpoints/', {
      Name: 'v1-ep',
      VirtualNetworkName: 'v1-made',
      IPAddress: '10.40.0.9',
      DNSServerList: '10.40.0.10',
    });
    expect(ep.ID).toMatch(UPPER_GUID);
    expect(await hcn.listEndpointsOfNetwork(v1.ID.toLowerCase())).toEqual([
      expect.objectContaining({
        ID: ep.ID,
        Name: 'v1-ep',
        HostComputeNetwork: v1.ID,
        IpConfigurations: [{ IpAddress: '10.40.0.9', PrefixLength: 24 }],
        Routes: [{ NextHop: '10.40.0.1', DestinationPrefix: '0.0.0.0/0' }],
        Dns: { ServerList: ['10.40.0.10'] },
      }),
    ]);

    const ns = await hcn.hnsCall<Record<string, any>>('POST', '/namespaces/', { IsDefault: true });
    await hcn.hnsCall('POST', `/namespaces/${ns.ID}/addresource`, { Type: 'Endpoint', Data: { Id: ep.ID } });
    expect(await hcn.getNamespace(ns.ID)).toMatchObject({
      ID: ns.ID,
      Type: 'HostDefault',
      // Upper case, as HNS lists them (microsoft/hcsshim cmd/ncproxy/hcn_networking_test.go).
      Resources: [{ Type: 'Endpoint', Data: { Id: String(ep.ID).toUpperCase() } }],
    });
    expect((await hcn.getEndpoint(ep.ID)).HostComputeNamespace).toBe(ns.ID);

    // And deleting through v2 removes it for v1.
    await hcn.deleteNetwork(v1.ID);
    expect(await hcn.hnsCall('GET', '/networks/')).toEqual([]);
    expect(await hcn.hnsCall('GET', '/endpoints/')).toEqual([]);
  });
});
