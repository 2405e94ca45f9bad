/**
 * An endpoint create that HNS carried out although its answer said it failed (on a host without HCN: HNS v1's
 * envelope {Success: false} with no more than E_FAIL). The ADD recognises the endpoint it planned and goes on with
 * it; when it cannot tell (HNS does not answer the look either), it fails and keeps the address, which the endpoint
 * may hold, for the DEL. Never is an address released to the IPAM while an endpoint holds it.
 */
import { HR } from '../../src/hns/hresults';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal } from './support';

let h: Harness;
useHarness({ version: { major: 9, minor: 1 }, v2: false }, (x) => (h = x));

const conf = () => bridgeConf({ ipam: hostLocal(h) });

/** The addresses HNS's endpoints hold. */
async function endpointIps(): Promise<string[]> {
  return (await h.sim.control.dump()).endpoints.flatMap((e) =>
    ((e.IpConfigurations as Array<{ IpAddress: string }> | undefined) ?? []).map((c) => c.IpAddress),
  );
}

/** Every address an endpoint holds is allocated in host-local. */
async function expectNoHeldAddressFree(): Promise<void> {
  const held = heldIps(h, 'cbr0');
  for (const ip of await endpointIps())
    expect({ ip, allocated: held[ip] !== undefined }).toEqual({ ip, allocated: true });
}

it('a v1 create committed but answered E_FAIL: the ADD recognises its endpoint and succeeds with its address', async () => {
  await h.sim.control.failCall('HNSCall POST /endpoints', HR.E_FAIL, { afterCommit: true });
  const add = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'p1', netns: 'none' });
  expect(add.exitCode).toBe(0);
  const address = (add.json!.ips as Array<{ address: string }>)[0]!.address.split('/')[0]!;
  expect(await endpointIps()).toEqual([address]);
  expect(heldIps(h, 'cbr0')).toEqual({ [address]: 'p1' });
  expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'p1', netns: 'none' })).exitCode).toBe(0);
  expect(await endpointIps()).toEqual([]);
  expect(heldIps(h, 'cbr0')).toEqual({});
});

it('and HNS does not answer the look for it: the ADD fails and keeps the address; the DEL releases it', async () => {
  await h.sim.control.failCall('HNSCall POST /endpoints', HR.E_FAIL, { afterCommit: true });
  // The first listing is the ADD's look for leftovers of earlier attempts, before the create.
  await h.sim.control.failCall('HNSCall GET /endpoints', HR.RPC_S_SERVER_UNAVAILABLE, { nth: 2, count: 5 });
  const add = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'p1', netns: 'none' });
  expect(add.exitCode).not.toBe(0);
  expect(await endpointIps()).toHaveLength(1);
  await expectNoHeldAddressFree();
  await h.sim.control.reset({ objects: false });
  expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'p1', netns: 'none' })).exitCode).toBe(0);
  expect(await endpointIps()).toEqual([]);
  expect(heldIps(h, 'cbr0')).toEqual({});
});
