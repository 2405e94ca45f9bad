/**
 * HCS compute systems in the simulator (src/sim/compute-systems.ts): hcsshim's hot attach
 * (hnsendpoint.go modifyNetworkEndpoint → HcsOpenComputeSystem / HcsModifyComputeSystem) against containers the
 * operator starts and removes, HNS's view of the attach (v1 SharedContainers), the HCS error codes, and what the
 * host's adapter list shows once a switch sits on a NIC (src/sim/host-vnics.ts).
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { envelope, l2bridge, ok, okJson, useSimulator, V2 } from './helpers';

const fx = useSimulator();
const HCS_E_SYSTEM_NOT_FOUND = 0xc037010e;
const ERROR_INVALID_DATA = 0x8007000d;
const HCN_E_ENDPOINT_NOT_FOUND = 0x803b0002;

const hot = (RequestType: string, Settings: unknown, ResourceType = 'Network') =>
  JSON.stringify({ ResourceType, RequestType, Settings });

async function endpoint(): Promise<string> {
  const net = ok(await fx.c.createNetwork(null, l2bridge('n')));
  return ok(await fx.c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'e' })));
}

test('a hot-added endpoint shows as attached to the container in v1 (SharedContainers) and in dump; Remove undoes it', async () => {
  const { c, sim } = fx;
  const ep = await endpoint();
  await sim.control.addContainer('ctr-1');
  expect(ok(await c.call({ op: 'HcsOpenComputeSystem', id: 'ctr-1' }))).toBe('ctr-1');
  expect((await c.call({ op: 'HcsModifyComputeSystem', id: 'ctr-1', settings: hot('Add', ep) })).hr).toBe(0);
  expect(envelope(await c.hnsCall('GET', `/endpoints/${ep}`)).Output).toMatchObject({
    SharedContainers: ['ctr-1'],
    State: 2,
  });
  expect((await sim.control.dump()).computeSystems).toEqual([{ ID: 'ctr-1', Endpoints: [ep] }]);
  // hcsshim checks IsAttached first; a second Add of the same endpoint is refused.
  expect((await c.call({ op: 'HcsModifyComputeSystem', id: 'ctr-1', settings: hot('Add', ep) })).hr >>> 0).toBe(
    0x803b0014,
  );

  expect((await c.call({ op: 'HcsModifyComputeSystem', id: 'ctr-1', settings: hot('Remove', ep) })).hr).toBe(0);
  expect(envelope(await c.hnsCall('GET', `/endpoints/${ep}`)).Output).toMatchObject({ SharedContainers: [], State: 4 });
  expect((await sim.control.dump()).computeSystems).toEqual([{ ID: 'ctr-1', Endpoints: [] }]);
});

test('HCS answers: a container that does not exist, a request that is not a network Add/Remove, an endpoint HNS does not have', async () => {
  const { c, sim } = fx;
  const ep = await endpoint();
  const gone = await c.call({ op: 'HcsOpenComputeSystem', id: 'nope' });
  expect(gone.hr >>> 0).toBe(HCS_E_SYSTEM_NOT_FOUND);
  // The result document HCS fills in (hcsshim internal/hcs/errors.go hcsResult).
  expect(JSON.parse(gone.errorRecord!)).toEqual({
    Error: HCS_E_SYSTEM_NOT_FOUND | 0,
    ErrorMessage: expect.stringContaining('does not exist'),
    ErrorEvents: [expect.objectContaining({ Message: expect.any(String) })],
  });

  await sim.control.addContainer('ctr-2');
  for (const bad of [hot('Add', ep, 'Memory'), hot('Update', ep), hot('Add', { Id: ep }), hot('Add', 'not-a-guid')]) {
    expect([bad, (await c.call({ op: 'HcsModifyComputeSystem', id: 'ctr-2', settings: bad })).hr >>> 0]).toEqual([
      bad,
      ERROR_INVALID_DATA,
    ]);
  }
  expect(
    (
      await c.call({
        op: 'HcsModifyComputeSystem',
        id: 'ctr-2',
        settings: hot('Add', '0badf00d-0000-4000-8000-00000000dead'),
      })
    ).hr >>> 0,
  ).toBe(HCN_E_ENDPOINT_NOT_FOUND);
  // Removed between open and modify: the modify finds no compute system either.
  await sim.control.removeContainer('ctr-2');
  expect((await c.call({ op: 'HcsModifyComputeSystem', id: 'ctr-2', settings: hot('Add', ep) })).hr >>> 0).toBe(
    HCS_E_SYSTEM_NOT_FOUND,
  );
  // A removed container leaves the endpoint's record as it was (the sources do not say HNS rewrites it).
  expect((await sim.control.dump()).computeSystems).toEqual([]);
});

test('an HNS restart drops the endpoints (and so the vNICs in containers); the containers stay', async () => {
  const { c, sim } = fx;
  const ep = await endpoint();
  await sim.control.addContainer('ctr-3');
  ok(
    await c
      .call({ op: 'HcsModifyComputeSystem', id: 'ctr-3', settings: hot('Add', ep) })
      .then((r) => ({ ...r, result: r.result ?? '' })),
  );
  await sim.control.restart();
  await sim.control.waitIdle();
  expect((await sim.control.dump()).computeSystems).toEqual([{ ID: 'ctr-3', Endpoints: [] }]);
});

test('hcn-sim ctl container add | rm, listed in dump', () => {
  const cli = path.join(__dirname, '..', '..', 'dist', 'cli', 'hcn-sim.js');
  const ctl = (...args: string[]) =>
    spawnSync(process.execPath, [cli, 'ctl', '--address', fx.sim.address, ...args], { encoding: 'utf8' });
  expect(ctl('container', 'add', 'abc123').status).toBe(0);
  const dump = JSON.parse(ctl('dump').stdout) as { computeSystems: unknown[] };
  expect(dump.computeSystems).toEqual([{ ID: 'abc123', Endpoints: [] }]);
  expect(ctl('container', 'rm', 'abc123').status).toBe(0);
  const again = ctl('container', 'rm', 'abc123');
  expect({ status: again.status, stderr: again.stderr }).toEqual({
    status: 1,
    stderr: expect.stringContaining('no compute system abc123'),
  });
  expect(ctl('container', 'frobnicate').status).not.toBe(0);
});

test('a switch on a NIC adds a host vNIC "vEthernet (…)" with its MAC, unless the network has DisableHostPort', async () => {
  const { c } = fx;
  const adapters = async () =>
    (JSON.parse(ok(await c.enumerateAdapters())) as Array<{ Name: string; MacAddress: string; Physical: boolean }>).map(
      (a) => `${a.Name}|${a.MacAddress}|${a.Physical}`,
    );
  expect(await adapters()).toEqual(['Ethernet|00-15-5D-AA-00-01|true', 'Ethernet 2|00-15-5D-AA-00-02|true']);
  const withNic = (name: string, nic: string, flags: number) =>
    JSON.stringify({
      ...V2,
      Name: name,
      Type: 'Transparent',
      Flags: flags,
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: nic } }],
    });
  const shared = ok(await c.createNetwork(null, withNic('shared', 'Ethernet 2', 0)));
  expect(await adapters()).toEqual([
    'vEthernet (Ethernet 2)|00-15-5D-AA-00-02|false',
    'Ethernet|00-15-5D-AA-00-01|true',
    'Ethernet 2|00-15-5D-AA-00-02|true',
  ]);
  ok(await c.createNetwork(null, withNic('nohost', 'Ethernet', 8 | 1024)));
  expect((await adapters()).filter((a) => a.startsWith('vEthernet'))).toEqual([
    'vEthernet (Ethernet 2)|00-15-5D-AA-00-02|false',
  ]);
  // The host vNIC is no adapter to build on.
  await c.deleteNetwork(shared);
  expect((await c.createNetwork(null, withNic('on-vnic', 'vEthernet (Ethernet 2)', 0))).hr >>> 0).toBe(0x803b0006);
});

test('version gates (hcsshim hcnglobals.go): DisableHostPort < 15.1, EnableIov and Iov < 15.4, InterfaceParameters < 10.0, DSR outside 9.3-9.x / 10.2+', async () => {
  const { c, sim } = fx;
  const net = (flags: number) => JSON.stringify({ ...V2, Name: `f${flags}`, Type: 'NAT', Flags: flags });
  const ep = (network: string, policy: unknown) =>
    c.createEndpoint(network, null, JSON.stringify({ ...V2, Name: `e${Math.random()}`, Policies: [policy] }));
  const dsr = { Type: 'OutBoundNAT', Settings: { Destinations: ['10.0.0.5'] } };
  const mtu = { Type: 'InterfaceParameters', Settings: { Mtu: 1400 } };
  const iov = { Type: 'Iov', Settings: { IovOffloadWeight: 100, QueuePairsRequested: 1 } };

  await sim.control.setVersion(15, 0);
  expect((await c.createNetwork(null, net(1024))).hr >>> 0).toBe(0x803b000a);
  const nat = ok(await c.createNetwork(null, net(8)));
  expect((await ep(nat, iov)).hr >>> 0).toBe(0x803b000e);
  ok(await ep(nat, mtu));
  ok(await ep(nat, dsr));
  await sim.control.setVersion(15, 1);
  ok(await c.createNetwork(null, net(1024)));
  expect((await c.createNetwork(null, net(8192))).hr >>> 0).toBe(0x803b000a);
  await sim.control.setVersion(9, 5);
  expect((await ep(nat, mtu)).hr >>> 0).toBe(0x803b000e);
  ok(await ep(nat, dsr));
  await sim.control.setVersion(10, 1);
  expect((await ep(nat, dsr)).hr >>> 0).toBe(0x803b000d);
  await sim.control.setVersion(15, 4);
  ok(await c.createNetwork(null, net(8192)));
  expect(okJson(await c.queryNetworkProperties(nat, JSON.stringify(V2)))).toMatchObject({ Flags: 8 });
});
