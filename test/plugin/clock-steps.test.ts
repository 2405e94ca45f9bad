/**
 * A wall clock that steps back and forth (NTP, Hyper-V time sync) may cost time, never an address: ADDs, DELs and
 * whole-node audits run on an injected clock that steps between them, while HNS now and then refuses to delete an
 * endpoint (the DEL keeps its IP: tombstone ipamPending). In each round a whole-node audit is held in its HNS
 * listing (a hang) while a pod is added, the clock steps, and the pod is deleted: the audit's listing cannot have
 * seen that pod, so it must not release the IP its DEL kept. After every round, no address is held by two HNS
 * endpoints, and every address an endpoint holds is still allocated in IPAM (else IPAM hands it to the next pod).
 */
import * as path from 'path';
import { pluginDeps } from '../../src/plugin/deps';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace, until } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const LISTING = 'HNSCall GET /networks';
const E_ACCESSDENIED = 0x80070005;

let clock = 0;
const conf = (auditIntervalSeconds: number) =>
  bridgeConf({ cniVersion: '1.0.0', ipam: hostLocal(h), auditIntervalSeconds });

/** Every address an HNS endpoint holds: held by that endpoint alone, and allocated in IPAM. */
async function addressesSafe(when: string): Promise<void> {
  const holders = new Map<string, string[]>();
  for (const e of (await h.sim.control.dump()).endpoints)
    for (const c of (e.IpConfigurations as Array<{ IpAddress: string }> | undefined) ?? [])
      holders.set(c.IpAddress, [...(holders.get(c.IpAddress) ?? []), e.Name]);
  const allocated = heldIps(h, 'cbr0');
  const unsafe = [...holders].filter(([ip, eps]) => eps.length > 1 || !(ip in allocated));
  expect({ when, unsafe }).toEqual({ when, unsafe: [] });
}

/** A small deterministic generator (the rounds are the same on every run). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

it('ADD, DEL and audits under a clock stepping back and forth, HNS refusing deletes now and then: no address is handed out twice', async () => {
  clock = 1_800_000_000_000;
  h.deps = pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims'), now: () => clock });
  const next = rng(32);
  // The first round is the one that broke: a step back, and HNS refusing the delete. Then seeded ones.
  const rounds: Array<{ step: number; refuse: boolean }> = [{ step: -600_000, refuse: true }];
  for (let i = 0; i < 7; i++)
    rounds.push({
      step: [-3_600_000, -600_000, -1_000, 0, 1_000, 600_000][Math.floor(next() * 6)]!,
      refuse: next() < 0.6,
    });
  expect(
    (await cni(h, { verb: 'ADD', conf: conf(0), containerId: 'warm', netns: await newNamespace(h) })).exitCode,
  ).toBe(0);

  for (const [n, { step, refuse }] of rounds.entries()) {
    const when = `round ${n} (step ${step / 1000} s, deletes ${refuse ? 'refused' : 'accepted'})`;
    // A whole-node audit (an ADD with auditIntervalSeconds 0) held in its network listing.
    const listed = (await h.sim.control.stats()).calls[LISTING] ?? 0;
    await h.sim.control.hang(LISTING);
    const auditing = cni(h, { verb: 'ADD', conf: conf(0), containerId: `z${n}`, netns: await newNamespace(h) });
    await until(async () => (((await h.sim.control.stats()).calls[LISTING] ?? 0) > listed ? true : undefined));
    // Meanwhile a pod comes and goes; the clock steps between its ADD and its DEL.
    const q = `q${n}`;
    const netns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: conf(3600), containerId: q, netns })).exitCode).toBe(0);
    clock += step;
    if (refuse) await h.sim.control.failCall('HcnDeleteEndpoint', E_ACCESSDENIED, { count: 100 });
    expect((await cni(h, { verb: 'DEL', conf: conf(3600), containerId: q, netns })).exitCode).toBe(0);
    await h.sim.control.release(LISTING);
    expect((await auditing).exitCode).toBe(0);
    await addressesSafe(when);
    // HNS accepts deletes again; a later audit (the next round's) removes what it refused, then frees the IP.
    await h.sim.control.reset({ objects: false });
    clock += 1_000;
    expect(
      (await cni(h, { verb: 'ADD', conf: conf(3600), containerId: `r${n}`, netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    await addressesSafe(`${when}, then a new pod`);
  }
  // Once HNS deletes again and the clock settles, an audit frees every kept address: time was lost, nothing else.
  clock += 3_600_000;
  expect(
    (await cni(h, { verb: 'ADD', conf: conf(0), containerId: 'last', netns: await newNamespace(h) })).exitCode,
  ).toBe(0);
  await addressesSafe('at the end');
  const endpoints = (await h.sim.control.dump()).endpoints.length;
  expect(Object.keys(heldIps(h, 'cbr0'))).toHaveLength(endpoints);
});
