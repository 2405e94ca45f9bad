/**
 * Concurrency: sixteen ADDs (CLI processes) in parallel on sixteen different NICs of one host, while a
 * network leaked by a killed ADD (seed 000) still holds NIC 0. Every ADD audits HNS while the others are creating
 * their networks, so each audit sees in-flight and freshly committed networks of other pods. All sixteen succeed;
 * the leak is deleted; the call log shows HcnDeleteNetwork only ever named the leaked network (no audit deleted a
 * live in-flight network); at the end every pod's network and endpoint exist in HNS and match its record.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { AttachmentRecord } from '../../src/state/records';
import { sameId } from '../../src/hns/api';
import { cniProcess, startHarness, type Harness } from '../helpers/cni-harness';
import { nicNetworkName } from '../../src/orphans/ownership';

const N = 16;
const hex = (i: number) => i.toString(16).toUpperCase().padStart(2, '0');
const ADAPTERS = Array.from({ length: N + 2 }, (_, i) => ({
  Name: i === 0 ? 'Ethernet' : `Ethernet ${i + 1}`,
  MacAddress: `00-15-5D-BB-00-${hex(i + 1)}`,
}));
/** Pod i gets adapter i + 1 (adapter 0 stays the host's own). */
const nicOf = (i: number) => ADAPTERS[i + 1]!;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ adapters: ADAPTERS });
});
afterAll(async () => {
  await h.stop();
});

/** Polls until `probe` gives a value (bounded: the suite's timeout ends a wait that never comes). */
async function waitFor<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function conf(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'nics',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: `10.20.${i}.0/24`,
    logLevel: 'info',
    // Pod 1 is held in HNS while fifteen processes start: far from any timeout, even on a loaded machine.
    hnsTimeoutSeconds: 300,
    runtimeConfig: { mac: nicOf(i).MacAddress },
    // Every ADD audits the whole node (audit-due.ts), so fifteen audits race the held create: none may delete it.
    auditIntervalSeconds: 0,
    ...extra,
  };
}

describe('16 parallel ADDs on 16 NICs with a leak on NIC 0', () => {
  jest.setTimeout(180_000);

  it('all succeed, the leak is deleted, no live in-flight network is ever deleted, every pod matches its record', async () => {
    // The leak: an ADD on NIC 0 killed during HcnCreateNetwork, its DEL, and HNS completing the network afterwards.
    // HNS holds the create (hang) until the runtime's DEL is done, whatever the machine's load: a deterministic leak.
    await h.sim.control.setLatency('HcnCreateNetwork', 200);
    await h.sim.control.setRace('create-wins');
    await h.sim.control.killClient('HcnCreateNetwork');
    await h.sim.control.hang('HcnCreateNetwork');
    const killed = await cniProcess(h, { verb: 'ADD', conf: conf(0), containerId: 'pod-killed', netns: 'none' });
    expect({ signal: killed.signal, out: killed.stdout }).toEqual({ signal: 'SIGKILL', out: '' });
    const del = await cniProcess(h, { verb: 'DEL', conf: conf(0), containerId: 'pod-killed', netns: 'none' });
    expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
    await h.sim.control.release();
    await h.sim.control.waitIdle();
    const dump0 = await h.sim.control.dump();
    const leakId = dump0.boundAdapters[nicOf(0).Name]!;
    expect(leakId).toBeDefined();
    expect(dump0.networks.find((n) => n.ID === leakId)?.Name).toMatch(
      nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' }),
    );
    const seqBefore = (await h.sim.control.calls()).at(-1)!.seq;

    // Pod 1 goes first and is held mid-ADD: its network is created, its endpoint create hangs in HNS (a hung
    // mutation holds HNS's queue, reads are still served). Its network is then visible with a live intent and no
    // record: exactly what an audit must judge in-flight, never orphan.
    await h.sim.control.hang('HcnCreateEndpoint');
    const first = cniProcess(h, { verb: 'ADD', conf: conf(1), containerId: 'pod-1', netns: 'none' });
    const heldNet = await waitFor(async () => {
      const d = await h.sim.control.dump();
      const net = d.networks.find((n) => n.Name === nicNetworkName({ containerId: 'pod-1', ifname: 'eth0' }));
      return net && d.stats.hung.includes('HcnCreateEndpoint') ? net : undefined;
    });
    // The other fifteen at once. Each one's first mutation (a leak delete or its own create) comes after its audit
    // has judged; those mutations queue behind the hang, so once fifteen more are pending every audit has run while
    // pod 1 was held. Only then does HNS go on.
    const rest = Array.from({ length: N }, (_, i) => i).filter((i) => i !== 1);
    const others = rest.map((i) =>
      cniProcess(h, { verb: 'ADD', conf: conf(i), containerId: `pod-${i}`, netns: 'none' }),
    );
    await waitFor(async () => ((await h.sim.control.stats()).pendingMutations >= 1 + rest.length ? true : undefined));
    await h.sim.control.release();
    const byPod = new Map([[1, await first], ...(await Promise.all(others)).map((r, k) => [rest[k]!, r] as const)]);
    const runs = Array.from({ length: N }, (_, i) => byPod.get(i)!);
    const failed = runs
      .map((r, i) => (r.exitCode === 0 ? undefined : `pod-${i}: ${r.exitCode} ${r.stdout}`))
      .filter(Boolean);
    expect(failed).toEqual([]);

    // Every network delete in the call log (from any of the sixteen) named the leak, and the leak is gone.
    const calls = (await h.sim.control.calls()).filter((c) => c.seq > seqBefore);
    const deletes = calls.filter((c) => c.op === 'HcnDeleteNetwork' || c.op === 'HNSCall DELETE /networks/{id}');
    expect(deletes.length).toBeGreaterThanOrEqual(1);
    expect([...new Set(deletes.map((c) => c.id?.toLowerCase()))]).toEqual([leakId.toLowerCase()]);
    expect(calls.filter((c) => c.op === 'HcnDeleteEndpoint')).toEqual([]);
    // Every one of the fifteen audits met pod 1's network mid-flight and judged it in-flight (never orphan); the
    // only orphan any audit saw was the leak.
    const verdicts = (r: { stderr: string }) =>
      r.stderr
        .split('\n')
        .filter((l) => l.includes('"msg":"audit verdict"'))
        .map((l) => JSON.parse(l) as { audit: string; id: string });
    for (const i of rest) {
      const mine = verdicts(runs[i]!);
      expect({ pod: i, held: mine.find((v) => sameId(v.id, heldNet.ID))?.audit }).toEqual({
        pod: i,
        held: 'in-flight',
      });
      expect({
        pod: i,
        orphans: [...new Set(mine.filter((v) => v.audit === 'orphan').map((v) => v.id.toLowerCase()))],
      }).toEqual({
        pod: i,
        orphans: mine.some((v) => v.audit === 'orphan') ? [leakId.toLowerCase()] : [],
      });
    }

    // The end state: one network per NIC, each pod's network and endpoint as its record says.
    await h.sim.control.waitIdle();
    const dump = await h.sim.control.dump();
    expect(dump.networks.map((n) => n.ID)).not.toContain(leakId);
    expect(dump.networks).toHaveLength(N);
    expect(dump.endpoints).toHaveLength(N);
    for (let i = 0; i < N; i++) {
      const rec = JSON.parse(
        fs.readFileSync(path.join(h.stateDir, 'attachments', `pod-${i}@eth0.json`), 'utf8'),
      ) as AttachmentRecord;
      const net = dump.networks.find((n) => n.ID.toLowerCase() === rec.network.id.toLowerCase());
      const ep = dump.endpoints.find((e) => e.ID.toLowerCase() === rec.endpoint.id.toLowerCase());
      expect({ pod: i, network: net?.Name, endpoint: ep?.Name }).toEqual({
        pod: i,
        network: rec.network.name,
        endpoint: rec.endpoint.name,
      });
      expect(rec.mac).toBe(nicOf(i).MacAddress);
      expect(dump.boundAdapters[nicOf(i).Name]?.toLowerCase()).toBe(rec.network.id.toLowerCase());
      expect(String(ep!.HostComputeNetwork).toLowerCase()).toBe(rec.network.id.toLowerCase());
      expect(String(ep!.MacAddress).toUpperCase()).toBe(nicOf(i).MacAddress);
      expect((runs[i]!.json as { interfaces: Array<{ mac: string }> }).interfaces[0]!.mac).toBe(
        nicOf(i).MacAddress.toLowerCase().replace(/-/g, ':'),
      );
    }
    expect(fs.readdirSync(path.join(h.stateDir, 'intents'))).toEqual([]);
  });
});
