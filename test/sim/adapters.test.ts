/** Which networks bind a NIC, which NIC, and HNS's 0x803B0006 when it cannot (the seed-000 "leaked network holds the NIC"). */
import {
  expectEnvelopeFailure,
  expectFailure,
  l2bridge,
  natNetwork,
  ok,
  okJson,
  output,
  useSimulator,
  V2,
} from './helpers';

const fx = useSimulator();
const NOT_FOUND = 'An adapter was not found.';

const withNic = (name: string, nic: string, type = 'L2Bridge') =>
  l2bridge(name, '10.1.0.0/24', '10.1.0.1', {
    Type: type,
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: nic } }],
  });

test('adapter-bound types take the named NIC or the first unbound one; a bound or unknown NIC is 0x803B0006', async () => {
  const { c, sim } = fx;
  const tr = ok(await c.createNetwork(null, JSON.stringify({ ...V2, Name: 'tr', Type: 'Transparent' })));
  const l2 = ok(await c.createNetwork(null, l2bridge('l2')));
  expect((await sim.control.dump()).boundAdapters).toEqual({ Ethernet: tr, 'Ethernet 2': l2 });
  expect(okJson(await c.queryNetworkProperties(l2, null))).toMatchObject({
    NetworkAdapterName: 'Ethernet 2',
    SourceMac: '00-15-5D-AA-00-02',
  });

  // Every NIC is held now.
  expectFailure(
    await c.createNetwork(
      null,
      JSON.stringify({
        ...V2,
        Name: 'ov',
        Type: 'Overlay',
        Ipams: [{ Subnets: [{ IpAddressPrefix: '10.2.0.0/16' }] }],
      }),
    ),
    0x803b0006,
    NOT_FOUND,
  );
  expectFailure(await c.createNetwork(null, withNic('again', 'Ethernet 2')), 0x803b0006, NOT_FOUND);
  expectFailure(await c.createNetwork(null, withNic('tunnel', 'ethernet', 'L2Tunnel')), 0x803b0006, NOT_FOUND);
  expectEnvelopeFailure(
    await c.hnsCall(
      'POST',
      '/networks/',
      JSON.stringify({ Name: 'v1', Type: 'transparent', NetworkAdapterName: 'Ethernet' }),
    ),
    0x803b0006,
    NOT_FOUND,
  );
  // NAT, ICS, Private and Internal networks bind no NIC.
  for (const type of ['NAT', 'ICS', 'Private', 'Internal'])
    ok(await c.createNetwork(null, JSON.stringify({ ...V2, Name: type, Type: type })));

  // Deleting the network frees its NIC (the fix for a leaked network).
  ok(await c.deleteNetwork(l2));
  const again = ok(await c.createNetwork(null, withNic('again', 'Ethernet 2')));
  expect((await sim.control.dump()).boundAdapters['Ethernet 2']).toBe(again);
});

test('an unknown NIC name is 0x803B0006 too; v1 NetworkAdapterName binds like the v2 policy', async () => {
  const { c, sim } = fx;
  expectFailure(await c.createNetwork(null, withNic('x', 'Ethernet 9')), 0x803b0006, NOT_FOUND);
  const v1 = output(
    await c.hnsCall(
      'POST',
      '/networks/',
      JSON.stringify({
        Name: 'v1',
        Type: 'l2bridge',
        NetworkAdapterName: 'Ethernet 2',
        Subnets: [{ AddressPrefix: '10.3.0.0/24', GatewayAddress: '10.3.0.1' }],
      }),
    ),
  );
  expect(v1.NetworkAdapterName).toBe('Ethernet 2');
  expect((await sim.control.dump()).boundAdapters).toEqual({ 'Ethernet 2': v1.ID });
});

test('adapters can be added and removed; HcnSimEnumerateAdapters lists them', async () => {
  const { c, sim } = fx;
  await sim.control.addAdapter({ Name: 'SLOT 3', MacAddress: '00:15:5d:aa:00:33' });
  try {
    const adapters = JSON.parse(ok(await c.enumerateAdapters())) as Array<Record<string, unknown>>;
    expect(adapters.map((a) => a.Name)).toEqual(['Ethernet', 'Ethernet 2', 'SLOT 3']);
    expect(adapters[2]).toMatchObject({ MacAddress: '00-15-5D-AA-00-33', InterfaceIndex: 8 });
    const id = ok(await c.createNetwork(null, withNic('slot', 'SLOT 3')));
    expect(okJson(await c.queryNetworkProperties(id, null)).SourceMac).toBe('00-15-5D-AA-00-33');
    await expect(sim.control.addAdapter({ Name: 'slot 3', MacAddress: '00-15-5D-AA-00-34' })).rejects.toThrow(
      /already exists/,
    );
    await expect(sim.control.addAdapter({ Name: 'bad', MacAddress: 'zz' })).rejects.toThrow(/not a MAC/);
  } finally {
    await sim.control.removeAdapter('SLOT 3');
  }
  expect((await sim.control.host()).adapters.map((a) => a.Name)).toEqual(['Ethernet', 'Ethernet 2']);
  expectFailure(await c.createNetwork(null, withNic('gone', 'SLOT 3')), 0x803b0006, NOT_FOUND);
  await expect(sim.control.removeAdapter('SLOT 3')).rejects.toThrow(/no adapter named/);
  ok(await c.createNetwork(null, natNetwork('still-fine')));
});
