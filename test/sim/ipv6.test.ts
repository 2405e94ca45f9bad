/**
 * hcn-sim and IPv6: networks with subnets of both families, HNS assigning one address per family, both views
 * showing both addresses, and what HNS refuses (with its error codes and the sources cited in src/sim).
 */
import { HR } from '../../src/hns/hresults';
import type { Hcn } from '../../src/hns/hcn';
import { endpointFromV1 } from '../../src/hns/api';
import type { HnsV1Endpoint } from '../../src/hns/schema';
import { useHarness, type Harness } from '../helpers/cni-harness';

let h: Harness;
useHarness(undefined, (x) => (h = x));
const hcn = (): Hcn => h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
const V2 = { SchemaVersion: { Major: 2, Minor: 0 } };

async function dualNetwork(name = 'dual', subnets = ['10.1.0.0/24', 'fd00:1::/64']): Promise<string> {
  const gw = (p: string) =>
    p.includes(':')
      ? { NextHop: p.replace('::/64', '::1'), DestinationPrefix: '::/0' }
      : { NextHop: p.replace('.0/24', '.1'), DestinationPrefix: '0.0.0.0/0' };
  const n = await hcn().createNetwork({
    Name: name,
    Type: 'L2Bridge',
    Ipams: [{ Type: 'Static', Subnets: subnets.map((p) => ({ IpAddressPrefix: p, Routes: [gw(p)] })) }],
    ...V2,
  });
  return n.ID!;
}
async function refusal(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (e) {
    return (e as { hresult: number }).hresult;
  }
  throw new Error('accepted');
}

describe('IPv6 subnets and address assignment', () => {
  it('HNS assigns one address per family, skipping the gateway; default routes for both families; both views show both', async () => {
    const net = await dualNetwork();
    const a = await hcn().createEndpoint(net, { Name: 'a', ...V2 });
    const b = await hcn().createEndpoint(net, { Name: 'b', ...V2 });
    expect(a.IpConfigurations).toEqual([
      { IpAddress: '10.1.0.2', PrefixLength: 24 },
      { IpAddress: 'fd00:1::2', PrefixLength: 64 },
    ]);
    expect(b.IpConfigurations!.map((c) => c.IpAddress)).toEqual(['10.1.0.3', 'fd00:1::3']);
    expect(a.Routes).toEqual([
      { NextHop: '10.1.0.1', DestinationPrefix: '0.0.0.0/0' },
      { NextHop: 'fd00:1::1', DestinationPrefix: '::/0' },
    ]);
    const v1 = await hcn().hnsCall<HnsV1Endpoint>('GET', `/endpoints/${a.ID}`);
    expect(v1).toMatchObject({
      IPAddress: '10.1.0.2',
      PrefixLength: 24,
      GatewayAddress: '10.1.0.1',
      IPv6Address: 'fd00:1::2',
      IPv6PrefixLength: 64,
      GatewayAddressV6: 'fd00:1::1',
    });
    expect(endpointFromV1(v1).ips).toEqual([
      { address: '10.1.0.2', prefixLength: 24 },
      { address: 'fd00:1::2', prefixLength: 64 },
    ]);
  });

  it('a requested IPv6 address is held in one spelling: another spelling of it is refused as held', async () => {
    const net = await dualNetwork();
    await hcn().createEndpoint(net, {
      Name: 'a',
      IpConfigurations: [{ IpAddress: 'fd00:1::10', PrefixLength: 64 }],
      ...V2,
    });
    expect(
      await refusal(
        hcn().createEndpoint(net, { Name: 'b', IpConfigurations: [{ IpAddress: 'FD00:1:0::0010' }], ...V2 }),
      ),
    ).toBe(HR.ADDR_INVALID_OR_RESERVED);
    expect(
      await refusal(hcn().createEndpoint(net, { Name: 'c', IpConfigurations: [{ IpAddress: 'fd00:2::10' }], ...V2 })),
    ).toBe(HR.INVALID_IP);
  });

  it('an IPv4 and an IPv6 mapping of the same host port coexist (NatFlagsIPv6); a second IPv6 one is refused', async () => {
    const net = await dualNetwork();
    const pm = (flags?: number) => ({
      Type: 'PortMapping',
      Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080, ...(flags ? { Flags: flags } : {}) },
    });
    await hcn().createEndpoint(net, { Name: 'a', Policies: [pm(), pm(2)], ...V2 });
    expect(await refusal(hcn().createEndpoint(net, { Name: 'b', Policies: [pm(2)], ...V2 }))).toBe(
      HR.PORT_ALREADY_EXISTS,
    );
  });
});

describe('what HNS refuses', () => {
  it('two addresses of one family on one endpoint: HCN_E_INVALID_ENDPOINT', async () => {
    const net = await dualNetwork();
    const two = [{ IpAddress: 'fd00:1::10' }, { IpAddress: 'fd00:1::11' }];
    expect(await refusal(hcn().createEndpoint(net, { Name: 'a', IpConfigurations: two, ...V2 }))).toBe(
      HR.INVALID_ENDPOINT,
    );
  });

  it('a prefix length wider than the family: HCN_E_INVALID_PREFIX', async () => {
    const net = await dualNetwork();
    expect(
      await refusal(
        hcn().createEndpoint(net, {
          Name: 'a',
          IpConfigurations: [{ IpAddress: 'fd00:1::10', PrefixLength: 129 }],
          ...V2,
        }),
      ),
    ).toBe(0x803b0030);
    expect(
      await refusal(
        hcn().createEndpoint(net, {
          Name: 'b',
          IpConfigurations: [{ IpAddress: '10.1.0.10', PrefixLength: 33 }],
          ...V2,
        }),
      ),
    ).toBe(0x803b0030);
  });

  it('an IPv6 gateway outside its subnet: HCN_E_INVALID_NETWORK', async () => {
    const bad = {
      Name: 'bad',
      Type: 'L2Bridge',
      Ipams: [
        {
          Type: 'Static' as const,
          Subnets: [{ IpAddressPrefix: 'fd00:1::/64', Routes: [{ NextHop: 'fd00:2::1', DestinationPrefix: '::/0' }] }],
        },
      ],
      ...V2,
    };
    expect(await refusal(hcn().createNetwork(bad))).toBe(HR.INVALID_NETWORK);
  });

  it("an IPv6 subnet routed through a link-local next hop, as Azure CNI's overlay gateway fe80::1234:5678:9abc, is taken", async () => {
    const n = await hcn().createNetwork({
      Name: 'azure-v6',
      Type: 'L2Bridge',
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            {
              IpAddressPrefix: 'fd00:1::/64',
              Routes: [{ NextHop: 'fe80::1234:5678:9abc', DestinationPrefix: '::/0' }],
            },
          ],
        },
      ],
      ...V2,
    });
    expect(n.ID).toBeTruthy();
  });

  it('v1: an endpoint on a network with only IPv6 subnets is HCN_E_SUBNET_NOT_FOUND; an IPv6 literal in IPAddress is HCN_E_INVALID_IP', async () => {
    const v6only = await dualNetwork('v6only', ['fd00:1::/64']);
    const dual = await dualNetwork('dual');
    expect(await refusal(hcn().hnsCall('POST', '/endpoints/', { Name: 'a', VirtualNetwork: v6only }))).toBe(0x803b0005);
    expect(
      await refusal(hcn().hnsCall('POST', '/endpoints/', { Name: 'b', VirtualNetwork: dual, IPAddress: 'fd00:1::10' })),
    ).toBe(HR.INVALID_IP);
    // v1 on the dual-stack network gets the IPv4 address only: v1's one address field is IPv4.
    const c = await hcn().hnsCall<HnsV1Endpoint>('POST', '/endpoints/', { Name: 'c', VirtualNetwork: dual });
    expect([c.IPAddress, c.IPv6Address]).toEqual(['10.1.0.2', undefined]);
  });
});
