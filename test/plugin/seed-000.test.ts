/**
 * Seed 000, end to end through the real CLI entry as separate processes, as a runtime drives it: the simulator kills
 * the ADD during HcnCreateNetwork and commits the network later; the runtime's DEL exits 0; the leaked network is in
 * HNS, holding the NIC; a new pod's ADD on the same NIC succeeds, and the leak is gone. With the audit switched off
 * the same sequence fails with the NIC-busy error: the test can fail.
 */
import { cniProcess, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { nicNetworkName } from '../../src/orphans/ownership';
import { until } from './support';

const NIC = { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' };
const HOST = {
  adapters: [
    { Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' },
    { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' },
    NIC,
    { Name: 'Ethernet 4', MacAddress: '00-15-5D-AA-00-04' },
  ],
};

let h: Harness;
useHarness(HOST, (x) => (h = x));

const nicConf = (extra: Record<string, unknown> = {}) => delegatedNicConf(NIC.MacAddress, extra);

async function networksOnNic(): Promise<Array<{ ID: string; Name: string }>> {
  const dump = await h.sim.control.dump();
  const id = dump.boundAdapters[NIC.Name];
  return dump.networks.filter((n) => n.ID === id).map((n) => ({ ID: n.ID, Name: n.Name }));
}

/** Steps 1–9 of the seed: the killed ADD, the runtime's DEL, and the network HNS completes afterwards. */
async function leakOne(audit: boolean): Promise<string> {
  // HNS keeps working on the create (hang) until the runtime's DEL is over — deterministic, whatever the load.
  await h.sim.control.setRace('create-wins');
  await h.sim.control.killClient('HcnCreateNetwork');
  await h.sim.control.hang('HcnCreateNetwork');
  const add = await cniProcess(h, { verb: 'ADD', conf: nicConf({ audit }), containerId: 'pod-killed', netns: 'none' });
  expect(add.signal).toBe('SIGKILL');
  expect(add.stdout).toBe('');
  const del = await cniProcess(h, { verb: 'DEL', conf: nicConf({ audit }), containerId: 'pod-killed', netns: 'none' });
  expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
  expect(await networksOnNic()).toEqual([]); // HNS is still creating it: invisible
  await h.sim.control.release();
  await h.sim.control.waitIdle();
  const leaked = await networksOnNic();
  expect(leaked).toHaveLength(1);
  expect(leaked[0]!.Name).toMatch(nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' }));
  return leaked[0]!.ID;
}

describe('seed 000: an ADD killed during HcnCreateNetwork', () => {
  it('leaks a network that the next ADD on the same NIC removes before it succeeds', async () => {
    const leakId = await leakOne(true);
    const add = await cniProcess(h, { verb: 'ADD', conf: nicConf(), containerId: 'pod-next', netns: 'none' });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({ interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:00:03' }] });
    const now = await networksOnNic();
    expect(now).toHaveLength(1);
    expect(now[0]!.ID).not.toBe(leakId);
    expect(now[0]!.Name).toMatch(nicNetworkName({ containerId: 'pod-next', ifname: 'eth0' }));
    // The audit said why it deleted the leak.
    expect(add.stderr).toMatch(/"audit":"deleted".*"kind":"network"/);
    expect(add.stderr).toMatch(/tombstone|intent is dead|no committed attachment/);
  });

  it('with the audit switched off, the same sequence fails with the NIC-busy error', async () => {
    const leakId = await leakOne(false);
    const add = await cniProcess(h, {
      verb: 'ADD',
      conf: nicConf({ audit: false }),
      containerId: 'pod-next',
      netns: 'none',
    });
    expect(add.exitCode).toBe(1);
    expect(add.json).toMatchObject({
      code: 104,
      msg: expect.stringMatching(
        new RegExp(
          `^NIC 00-15-5D-AA-00-03 \\(adapter "Ethernet 3"\\) is held by network "${nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' })}".*a leaked network, and the audit is switched off`,
        ),
      ),
    });
    expect((await networksOnNic()).map((n) => n.ID)).toEqual([leakId]);
  });

  it('when the delete wins the race, the DEL itself removes the network HNS was creating', async () => {
    await h.sim.control.setRace('delete-wins');
    await h.sim.control.killClient('HcnCreateNetwork');
    await h.sim.control.hang('HcnCreateNetwork');
    const add = await cniProcess(h, { verb: 'ADD', conf: nicConf(), containerId: 'pod-killed', netns: 'none' });
    expect(add.signal).toBe('SIGKILL');
    const pending = cniProcess(h, { verb: 'DEL', conf: nicConf(), containerId: 'pod-killed', netns: 'none' });
    // The DEL's delete of the planned network id queues behind the create HNS is still working on.
    await until(
      async () => ((await h.sim.control.stats()).pendingMutations >= 2 ? true : undefined),
      60_000,
      'the DEL to queue behind the create',
    );
    expect((await h.sim.control.stats()).pendingMutations).toBe(2);
    await h.sim.control.release();
    expect((await pending).exitCode).toBe(0);
    await h.sim.control.waitIdle();
    expect(await networksOnNic()).toEqual([]);
  });
});
