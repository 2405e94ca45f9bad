/**
 * Issue 4, HNS that does not answer. With hnsTimeoutSeconds 1 and HcnCreateNetwork hanging (delegated-NIC mode),
 * the ADD (a CLI process) gives up after about a second with code 11 and leaves its intent on disk; HNS completes
 * the network once the hang is released; the next ADD for another pod on the same NIC finds it, sees that the
 * intent's process is gone, removes the network (audit) and succeeds. An HNS restart in the middle of an ADD is 11
 * as well, and the retried ADD succeeds.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cniProcess, startHarness, type Harness } from '../helpers/cni-harness';
import { recordFiles, until } from './support';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] };

let h: Harness;
beforeAll(async () => {
  h = await startHarness(HOST);
});
afterAll(async () => {
  await h.stop();
});
beforeEach(async () => {
  await h.reset();
});

function conf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'nic',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: '10.10.2.0/24',
    runtimeConfig: { mac: NIC.MacAddress },
    ...extra,
  };
}

const onNic = async () => {
  const d = await h.sim.control.dump();
  const id = d.boundAdapters[NIC.Name];
  return id ? d.networks.find((n) => n.ID === id) : undefined;
};

describe('HNS hanging or restarting during an ADD', () => {
  it('hnsTimeoutSeconds 1 + a hung HcnCreateNetwork: 11 after ~1 s, intent kept; the next pod\'s ADD removes what HNS completed', async () => {
    await h.sim.control.hang('HcnCreateNetwork');
    const started = Date.now();
    const hung = await cniProcess(h, { verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 1 }), containerId: 'pod-hung', netns: 'none' });
    const took = Date.now() - started;
    expect(hung.exitCode).toBe(1);
    expect(hung.json).toMatchObject({
      cniVersion: '1.1.0',
      code: 11,
      msg: expect.stringMatching(/^HNS did not answer while creating HNS network hcn-cni_nic_pod-hung_eth0_00155DAA0002_[0-9a-f]{8}: /),
    });
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(3000);
    expect(hung.stderr).toMatch(/HNS did not answer; leaving the intent for the audit/);
    expect(recordFiles(h, 'intents')).toEqual(['pod-hung@eth0.json']);
    const intent = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'intents', 'pod-hung@eth0.json'), 'utf8')) as { pid: number; planned: Array<{ kind: string; name: string; id?: string }> };
    expect(intent.pid).toBe(hung.pid);
    const plannedNet = intent.planned.find((p) => p.kind === 'network')!;
    expect(await onNic()).toBeUndefined(); // still hanging inside HNS

    // HNS finishes the create it accepted.
    expect((await h.sim.control.release()).released).toBe(1);
    await h.sim.control.waitIdle();
    const leaked = await onNic();
    expect(leaked?.Name).toBe(plannedNet.name);
    expect(leaked?.ID.toLowerCase()).toBe(plannedNet.id?.toLowerCase());

    // Another pod on the same NIC: the audit removes the leak (its ADD's process is gone), then the ADD succeeds.
    const next = await cniProcess(h, { verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 1 }), containerId: 'pod-next', netns: 'none' });
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toMatch(new RegExp(`"audit":"deleted".*"id":"${leaked!.ID}"`, 'i'));
    expect(next.stderr).toMatch(/its process \d+ is gone/);
    const now = await onNic();
    expect(now?.Name).toMatch(/^hcn-cni_nic_pod-next_eth0_00155DAA0002_/);
    expect((await h.sim.control.dump()).networks).toHaveLength(1);
  });

  it('an HNS restart in the middle of an ADD: 11; the retried ADD succeeds', async () => {
    await h.sim.control.hang('HcnCreateNetwork');
    const add = cniProcess(h, { verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 10 }), containerId: 'pod-r', netns: 'none' });
    await until(async () => ((await h.sim.control.calls()).some((c) => c.op === 'HcnCreateNetwork') ? true : undefined), 10_000, 'the ADD to reach HcnCreateNetwork');
    const restarted = Date.now();
    await h.sim.control.restart({ downMs: 300 });
    const r = await add;
    expect(Date.now() - restarted).toBeLessThan(2000); // the restart ended the call, not the 10 s timeout
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ code: 11, msg: expect.stringMatching(/^HNS did not answer while creating HNS network .*0x800706BF/i) });
    const create = (await h.sim.control.calls()).find((c) => c.op === 'HcnCreateNetwork')!;
    expect(create.fault).toMatch(/restart/);
    expect(await onNic()).toBeUndefined(); // the restart dropped the create

    await new Promise((res) => setTimeout(res, 350));
    const retry = await cniProcess(h, { verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 10 }), containerId: 'pod-r', netns: 'none' });
    expect(retry.exitCode).toBe(0);
    expect((await onNic())?.Name).toMatch(/^hcn-cni_nic_pod-r_eth0_/);
    expect(recordFiles(h, 'attachments')).toEqual(['pod-r@eth0.json']);
    expect(recordFiles(h, 'intents')).toEqual([]);
  });
});
