/**
 * Issue 4, concurrency: sixteen ADDs (CLI processes) in parallel on sixteen different NICs of one host, while a
 * network leaked by a killed ADD (seed 000) still holds NIC 0. Every ADD audits HNS while the others are creating
 * their networks, so each audit sees in-flight and freshly committed networks of other pods. All sixteen succeed;
 * the leak is deleted; the call log shows HcnDeleteNetwork only ever named the leaked network (no audit deleted a
 * live in-flight network); at the end every pod's network and endpoint exist in HNS and match its record.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { AttachmentRecord } from '../../src/state/records';
import { cniProcess, startHarness, type Harness } from '../helpers/cni-harness';
import { nicNetworkName } from '../../src/orphans/ownership';

const N = 16;
const hex = (i: number) => i.toString(16).toUpperCase().padStart(2, '0');
const ADAPTERS = Array.from({ length: N + 2 }, (_, i) => ({ Name: i === 0 ? 'Ethernet' : `Ethernet ${i + 1}`, MacAddress: `00-15-5D-BB-00-${hex(i + 1)}` }));
/** Pod i gets adapter i + 1 (adapter 0 stays the host's own). */
const nicOf = (i: number) => ADAPTERS[i + 1]!;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ adapters: ADAPTERS });
});
afterAll(async () => {
  await h.stop();
});

function conf(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'nics',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: `10.20.${i}.0/24`,
    logLevel: 'info',
    runtimeConfig: { mac: nicOf(i).MacAddress },
    ...extra,
  };
}

describe('16 parallel ADDs on 16 NICs with a leak on NIC 0', () => {
  jest.setTimeout(60_000);

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
    expect(dump0.networks.find((n) => n.ID === leakId)?.Name).toMatch(nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' }));
    const seqBefore = (await h.sim.control.calls()).at(-1)!.seq;

    // Sixteen pods at once; creates still take 200 ms each in HNS's single queue, so audits overlap creates.
    const runs = await Promise.all(
      Array.from({ length: N }, (_, i) => cniProcess(h, { verb: 'ADD', conf: conf(i), containerId: `pod-${i}`, netns: 'none' })),
    );
    const failed = runs.map((r, i) => (r.exitCode === 0 ? undefined : `pod-${i}: ${r.exitCode} ${r.stdout}`)).filter(Boolean);
    expect(failed).toEqual([]);

    // Every network delete in the call log (from any of the sixteen) named the leak, and the leak is gone.
    const calls = (await h.sim.control.calls()).filter((c) => c.seq > seqBefore);
    const deletes = calls.filter((c) => c.op === 'HcnDeleteNetwork' || c.op === 'HNSCall DELETE /networks/{id}');
    expect(deletes.length).toBeGreaterThanOrEqual(1);
    expect([...new Set(deletes.map((c) => c.id?.toLowerCase()))]).toEqual([leakId.toLowerCase()]);
    expect(calls.filter((c) => c.op === 'HcnDeleteEndpoint')).toEqual([]);
    // The audits did meet other pods' networks mid-flight: judged in-flight or live, never orphan.
    const verdicts = runs.flatMap((r) => r.stderr.split('\n').filter((l) => l.includes('"audit":"in-flight"') || l.includes('"audit":"orphan"')));
    const orphanLines = verdicts.filter((l) => l.includes('"audit":"orphan"'));
    expect(orphanLines.every((l) => l.includes(leakId) || l.toLowerCase().includes(leakId.toLowerCase()))).toBe(true);

    // The end state: one network per NIC, each pod's network and endpoint as its record says.
    await h.sim.control.waitIdle();
    const dump = await h.sim.control.dump();
    expect(dump.networks.map((n) => n.ID)).not.toContain(leakId);
    expect(dump.networks).toHaveLength(N);
    expect(dump.endpoints).toHaveLength(N);
    for (let i = 0; i < N; i++) {
      const rec = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', `pod-${i}@eth0.json`), 'utf8')) as AttachmentRecord;
      const net = dump.networks.find((n) => n.ID.toLowerCase() === rec.network.id.toLowerCase());
      const ep = dump.endpoints.find((e) => e.ID.toLowerCase() === rec.endpoint.id.toLowerCase());
      expect({ pod: i, network: net?.Name, endpoint: ep?.Name }).toEqual({ pod: i, network: rec.network.name, endpoint: rec.endpoint.name });
      expect(rec.mac).toBe(nicOf(i).MacAddress);
      expect(dump.boundAdapters[nicOf(i).Name]?.toLowerCase()).toBe(rec.network.id.toLowerCase());
      expect(String(ep!.HostComputeNetwork).toLowerCase()).toBe(rec.network.id.toLowerCase());
      expect(String(ep!.MacAddress).toUpperCase()).toBe(nicOf(i).MacAddress);
      expect((runs[i]!.json as { interfaces: Array<{ mac: string }> }).interfaces[0]!.mac).toBe(nicOf(i).MacAddress.toLowerCase().replace(/-/g, ':'));
    }
    expect(fs.readdirSync(path.join(h.stateDir, 'intents'))).toEqual([]);
  });
});
