/** The ordering model (src/sim/engine.ts): latency, FIFO mutations, concurrent reads, races, faults, restart. */
import { errorRecordFor, expectFailure, natNetwork, ok, output, sleep, useSimulator, V2 } from './helpers';

const fx = useSimulator();
const ids = (r: { result: string | null }) => JSON.parse(r.result ?? 'null') as string[];
const since = (t0: number) => Date.now() - t0;

/** Waits until the simulator has received `n` calls of `op`: the test decides the order calls arrive in, not a pause. */
async function arrived(op: string, n = 1): Promise<void> {
  while (((await fx.sim.control.stats()).calls[op] ?? 0) < n) await sleep(2);
}

// What a read sees while mutations are pending, and that reads are served meanwhile, is held by the hang test below,
// which holds the mutations until the reads are done: a latency window would decide that order on a loaded machine.
test('mutations run one at a time in arrival order, each after its latency', async () => {
  const { c, sim } = fx;
  await sim.control.setLatency('HcnCreateNetwork', 250);
  const t0 = Date.now();
  const a = c.createNetwork(null, natNetwork('a'));
  await arrived('HcnCreateNetwork'); // arrival order a, b
  const b = c.createNetwork(null, natNetwork('b'));
  const idA = ok(await a);
  expect(since(t0)).toBeGreaterThanOrEqual(245);
  const idB = ok(await b);
  expect(since(t0)).toBeGreaterThanOrEqual(495);
  expect(ids(await c.enumerateNetworks(null))).toEqual([idA, idB]);

  const log = (await sim.control.calls()).filter((r) => r.op === 'HcnCreateNetwork');
  expect(log.map((r) => r.id)).toEqual([idA, idB]);
  expect(log[1].seq).toBeGreaterThan(log[0].seq);
  // b waited for a: its own latency began only when a had committed.
  expect(log[1].finishedAt - log[0].finishedAt).toBeGreaterThanOrEqual(245);
  expect((await sim.control.stats()).calls).toMatchObject({ HcnCreateNetwork: 2, HcnEnumerateNetworks: 1 });
});

test('busyMs is the union of execution intervals: overlapping reads count once, serial mutations add up', async () => {
  const { c, sim } = fx;
  await sim.control.setLatency('HcnEnumerateNetworks', 100);
  await Promise.all([1, 2, 3].map(() => c.enumerateNetworks(null)));
  const afterReads = (await sim.control.stats()).busyMs;
  expect(afterReads).toBeGreaterThanOrEqual(98);
  // Counted once: no more than the span from the first accept to the last finish (three serial reads would be
  // their sum, at least 300 ms), whatever the machine's load did to that span.
  const reads = (await sim.control.calls()).filter((r) => r.op === 'HcnEnumerateNetworks');
  const span = Math.max(...reads.map((r) => r.finishedAt)) - Math.min(...reads.map((r) => r.acceptedAt));
  expect(afterReads).toBeLessThanOrEqual(span + 1);
  expect(afterReads).toBeLessThan(reads.reduce((sum, r) => sum + (r.finishedAt - r.acceptedAt), 0) - 50);
  await sim.control.setLatency('HcnCreateNetwork', 100);
  await Promise.all([c.createNetwork(null, natNetwork('x')), c.createNetwork(null, natNetwork('y'))]);
  const stats = await sim.control.stats();
  // Serial mutations add up (had they overlapped, the union would be about 100 ms).
  expect(stats.busyMs - afterReads).toBeGreaterThanOrEqual(196);
  expect(stats.pendingMutations).toBe(0);
  expect(stats.counts).toEqual({ networks: 2, endpoints: 0, namespaces: 0 });
});

describe('delete during create', () => {
  const NET = 'aaaaaaaa-0000-4000-8000-000000000001';

  test('delete-wins (default): the delete queues behind the create and nothing is left', async () => {
    const { c, sim } = fx;
    // The create is held until the delete has arrived: a race whatever the load.
    await sim.control.hang('HcnCreateNetwork');
    const create = c.createNetwork(NET, natNetwork('victim'));
    await arrived('HcnCreateNetwork');
    const del = c.deleteNetwork(NET);
    await arrived('HcnDeleteNetwork');
    await sim.control.release();
    ok(await del);
    ok(await create);
    expect(ids(await c.enumerateNetworks(null))).toEqual([]);
    expect((await sim.control.calls()).find((r) => r.op === 'HcnDeleteNetwork')?.fault).toBe('race-delete-wins');
  });

  test('create-wins: the delete finds nothing at once and the create commits later — the seed-000 leak', async () => {
    const { c, sim } = fx;
    await sim.control.setRace('create-wins');
    // Each create is held until its deletes have answered: a race whatever the load.
    await sim.control.hang('HcnCreateNetwork');
    const create = c.createNetwork(NET, natNetwork('leak'));
    await arrived('HcnCreateNetwork');
    expectFailure(await c.deleteNetwork(NET), 0x803b0001, 'The network was not found.');
    await sim.control.release();
    ok(await create);
    // The delete answered at once, before the create it raced committed.
    const calls = await sim.control.calls();
    const finished = (op: string) => calls.find((r) => r.op === op)!.finishedAt;
    expect(finished('HcnDeleteNetwork')).toBeLessThan(finished('HcnCreateNetwork'));
    expect(ids(await c.enumerateNetworks(null))).toEqual([NET]);

    const EP = 'bbbbbbbb-0000-4000-8000-000000000002';
    const NS = 'cccccccc-0000-4000-8000-000000000003';
    await sim.control.hang('HcnCreateEndpoint');
    await sim.control.hang('HcnCreateNamespace');
    const ce = c.createEndpoint(NET, EP, JSON.stringify({ ...V2, Name: 'e' }));
    const cn = c.createNamespace(NS, JSON.stringify(V2));
    await arrived('HcnCreateEndpoint');
    await arrived('HcnCreateNamespace');
    expectFailure(await c.deleteEndpoint(EP), 0x803b0002, 'The endpoint was not found.');
    const v1Delete = await c.hnsCall('DELETE', `/namespaces/${NS.toUpperCase()}`);
    expect(v1Delete.result).toBe(errorRecordFor(0x80070490, 'Element not found.'));
    await sim.control.release();
    ok(await ce);
    ok(await cn);
    await sim.control.waitIdle();
    expect(ids(await c.enumerateEndpoints(null))).toEqual([EP]);
    expect(ids(await c.enumerateNamespaces(null))).toEqual([NS]);
    expect((await sim.control.calls()).filter((r) => r.fault === 'race-create-wins').map((r) => r.op)).toEqual([
      'HcnDeleteNetwork',
      'HcnDeleteEndpoint',
      'HNSCall DELETE /namespaces/{id}',
    ]);
  });

  test('random: a seeded choice per race, the same sequence for the same seed', async () => {
    const { c, sim } = fx;
    const until = async (cond: () => Promise<boolean>) => {
      while (!(await cond())) await sleep(2);
    };
    const accepted = async (op: string, n: number) => ((await sim.control.stats()).calls[op] ?? 0) >= n;
    const run = async (seed: number) => {
      await sim.control.reset();
      await sim.control.setRace('random', seed);
      const outcomes: string[] = [];
      for (let i = 0; i < 12; i++) {
        // The create is held (hang) until the delete has arrived, so every round is a race whatever the load.
        await sim.control.hang('HcnCreateNetwork');
        const id = `dddddddd-0000-4000-8000-${String(i).padStart(12, '0')}`;
        const create = c.createNetwork(id, natNetwork(`r${i}`));
        await until(() => accepted('HcnCreateNetwork', i + 1));
        const del = c.deleteNetwork(id);
        await until(() => accepted('HcnDeleteNetwork', i + 1));
        await sim.control.release();
        const [d, cr] = await Promise.all([del, create]);
        ok(cr);
        outcomes.push(d.hr === 0 ? 'delete-wins' : 'create-wins');
        // The state agrees with the answer: a lost delete leaves the network.
        expect(ids(await c.enumerateNetworks(JSON.stringify({ Filter: JSON.stringify({ ID: id }) })))).toEqual(
          d.hr === 0 ? [] : [id],
        );
      }
      const log = (await sim.control.calls()).filter((r) => r.op === 'HcnDeleteNetwork').map((r) => r.fault);
      expect(log).toEqual(outcomes.map((o) => `race-${o}`));
      return outcomes;
    };
    const first = await run(42);
    expect(new Set(first)).toEqual(new Set(['delete-wins', 'create-wins']));
    expect(await run(42)).toEqual(first);
    expect(await run(7)).not.toEqual(first);
  });
});

test('failCall: the nth matching call (for count calls) fails with the HRESULT and its record, with no effect', async () => {
  const { c, sim } = fx;
  await sim.control.failCall('HcnCreateNetwork', 0x80004005, { nth: 2, count: 2 });
  const rs = [];
  for (const name of ['f1', 'f2', 'f3', 'f4']) rs.push(await c.createNetwork(null, natNetwork(name)));
  ok(rs[0]);
  expectFailure(rs[1], 0x80004005, 'Unspecified error');
  expectFailure(rs[2], 0x80004005, 'Unspecified error');
  ok(rs[3]);
  expect(ids(await c.enumerateNetworks(null))).toEqual([rs[0].result, rs[3].result]);
  // HNSCall failures travel in the envelope; other operations are not affected.
  await sim.control.failCall('HNSCall POST /networks', 0x803b0006);
  const env = await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'v1', Type: 'nat' }));
  expect(env).toEqual({ hr: 0, result: errorRecordFor(0x803b0006, 'An adapter was not found.'), errorRecord: null });
  output(await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'v1', Type: 'nat' })));
  const log = await sim.control.calls();
  expect(log.filter((r) => r.fault === 'failed').map((r) => [r.op, r.hr])).toEqual([
    ['HcnCreateNetwork', 0x80004005],
    ['HcnCreateNetwork', 0x80004005],
    ['HNSCall POST /networks', 0x803b0006],
  ]);
});

test('hang: a hung mutation holds the queue while reads are served; release lets it (and what queued behind) finish', async () => {
  const { c, sim } = fx;
  await sim.control.hang('HcnCreateNetwork');
  const a = c.createNetwork(null, natNetwork('a'));
  const b = c.createNetwork(null, natNetwork('b'));
  await arrived('HcnCreateNetwork', 2);
  expect(ids(await c.enumerateNetworks(null))).toEqual([]); // reads are served while HNS is stuck
  expect((await sim.control.stats()).pendingMutations).toBe(2);
  await expect(sim.control.waitIdle(100)).rejects.toThrow(/not idle/);
  await sim.control.release('HcnCreateNetwork');
  const [ra, rb] = await Promise.all([a, b]);
  await sim.control.waitIdle(1000);
  expect(ids(await c.enumerateNetworks(null))).toEqual([ok(ra), ok(rb)]);
  expect((await sim.control.calls()).find((r) => r.op === 'HcnCreateNetwork')?.fault).toBe('hung');
});

test('hang with ms stalls that long then completes normally; a hung read does not hold mutations', async () => {
  const { c, sim } = fx;
  const net = ok(await c.createNetwork(null, natNetwork('n')));
  await sim.control.hang('HcnDeleteNetwork', { ms: 150 });
  const t0 = Date.now();
  ok(await c.deleteNetwork(net));
  expect(since(t0)).toBeGreaterThanOrEqual(145);

  await sim.control.hang('HcnEnumerateNetworks');
  const stuckRead = c.enumerateNetworks(null);
  const created = ok(await c.createNetwork(null, natNetwork('m')));
  await sim.control.release();
  expect(ids(await stuckRead)).toEqual([created]);
});

test('restart: in-flight calls and calls during downMs fail with 0x800706BF; only persistent networks survive', async () => {
  const { c, sim } = fx;
  const persistent = ok(await c.createNetwork(null, natNetwork('persistent')));
  ok(await c.createNetwork(null, natNetwork('volatile', { Flags: 8 })));
  const e = ok(await c.createEndpoint(persistent, null, JSON.stringify({ ...V2, Name: 'e' })));
  const ns = ok(await c.createNamespace(null, JSON.stringify(V2)));
  ok(
    await c.modifyNamespace(
      ns,
      JSON.stringify({ ResourceType: 'Endpoint', RequestType: 'Add', Settings: { EndpointId: e } }),
    ),
  );
  await sim.control.hang('HcnCreateNetwork'); // in flight at the restart, whatever the load
  const inFlight = c.createNetwork(null, natNetwork('in-flight'));
  await arrived('HcnCreateNetwork', 3);
  await sim.control.restart({ downMs: 1000 });
  const rpc = 'The remote procedure call failed and did not execute.';
  expectFailure(await inFlight, 0x800706bf, rpc);
  expectFailure(await c.enumerateNetworks(null), 0x800706bf, rpc);
  expectFailure(await c.hnsCall('GET', '/networks/'), 0x800706bf, rpc);
  // Up again: waited for (HNS answers), not guessed.
  for (let r = await c.enumerateNetworks(null); r.hr !== 0; r = await c.enumerateNetworks(null)) await sleep(20);
  expect(ids(await c.enumerateNetworks(null))).toEqual([persistent]);
  expect(ids(await c.enumerateEndpoints(null))).toEqual([]);
  // No public source says a restart drops HCN namespaces (src/sim/store.ts restart): they stay, without endpoints.
  expect(ids(await c.enumerateNamespaces(null))).toEqual([ns]);
  expect((await sim.control.dump()).namespaces[0]!.Resources ?? []).toEqual([]);
  expectFailure(await c.openEndpoint(e), 0x803b0002, 'The endpoint was not found.');
  expect((await sim.control.stats()).restarts).toBe(1);
});

test('restart with dropNamespaces: the listed namespaces (or all of them) are gone too', async () => {
  const { c, sim } = fx;
  const a = ok(await c.createNamespace(null, JSON.stringify(V2)));
  const b = ok(await c.createNamespace(null, JSON.stringify(V2)));
  await sim.control.restart({ dropNamespaces: [String(a).toUpperCase()] });
  expect(ids(await c.enumerateNamespaces(null))).toEqual([b]);
  await sim.control.restart({ dropNamespaces: true });
  expect(ids(await c.enumerateNamespaces(null))).toEqual([]);
});

test('version: GET /globals/version reports it; v2:false makes every Hcn* call E_NOTIMPL while HNSCall works', async () => {
  const { c, sim } = fx;
  expect(output(await c.hnsCall('GET', '/globals/version'))).toEqual({ Major: 15, Minor: 4 });
  await sim.control.setVersion(9, 3, { v2: false });
  expect(output(await c.hnsCall('GET', '/globals/version'))).toEqual({ Major: 9, Minor: 3 });
  expectFailure(await c.createNamespace(null, JSON.stringify(V2)), 0x80004001, 'Not implemented.');
  output(await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'old', Type: 'nat' })));
  ok(await c.enumerateAdapters());
  expect((await sim.control.host()).v2).toBe(false);
});
