/**
 * A pod's network is judged by what it needs, not by what exists: an endpoint that is in HNS but not attached as its
 * record says (a repair killed between its create and its attach; an attach HNS refused once) leaves the pod without
 * network just as a missing one does. STATUS says 51 and names the pod until a repair attaches it again; the repair
 * re-attaches without creating anything, replaces the intent a killed repair left, and commits.
 */
import * as fs from 'fs';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { silentLogger } from '../../src/log/logger';
import { repairAttachments } from '../../src/plugin/verbs/repair';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { lastSeq, mutationsSince, newNamespace, recordFiles } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(30_000);

const conf = bridgeConf({ cniVersion: '1.1.0', repair: true });

function servedConf() {
  const c = h.served.confs().find((x) => x.stateDir === h.stateDir && x.name === conf.name);
  if (!c) throw new Error('no configuration served');
  return c;
}

async function addPod(containerId: string): Promise<{ ns: string; endpointId: string }> {
  const ns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf, containerId, netns: ns })).exitCode).toBe(0);
  const [file] = recordFiles(h, 'attachments');
  const rec = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', file!), 'utf8')) as {
    endpoint: { id: string };
  };
  return { ns, endpointId: rec.endpoint.id };
}

async function attachedTo(endpointId: string): Promise<unknown> {
  const ep = (await h.sim.control.dump()).endpoints.find((e) => String(e.ID).toLowerCase() === endpointId);
  return ep?.HostComputeNamespace ?? null;
}

const status = () => cni(h, { verb: 'STATUS', conf });

describe('an endpoint that is there but not attached as recorded', () => {
  it('STATUS says 51 naming the pod; the next repair re-attaches it (nothing created), drops a killed repair’s intent; CHECK passes and STATUS is 0', async () => {
    const { ns, endpointId } = await addPod('pod-detached');
    // What a repair killed after HNS completed its create leaves: the endpoint, detached, and that repair's intent
    // of a process that is gone.
    const { api } = await h.deps.hns.api(servedConf());
    await api.detachNamespace(endpointId, ns);
    const intentsDir = path.join(h.stateDir, 'intents');
    fs.mkdirSync(intentsDir, { recursive: true });
    const [recordFile] = recordFiles(h, 'attachments');
    fs.writeFileSync(
      path.join(intentsDir, recordFile!),
      JSON.stringify({
        kind: 'intent',
        schema: 1,
        id: 'killed-repair',
        containerId: 'pod-detached',
        ifname: 'eth0',
        cniNetwork: conf.name,
        planned: [{ kind: 'endpoint', name: 'x', id: endpointId }],
        pid: 2 ** 22 + 17,
        pidStartTime: null,
        createdAt: Date.now(),
        deadline: Date.now() + 3_600_000,
      }),
    );
    expect(await attachedTo(endpointId)).toBeNull();

    const before = await status();
    expect(before.json).toMatchObject({ code: 51 });
    expect(String(before.json!.details)).toMatch(/pod-detached@eth0: endpoint .* is not attached to namespace/);

    const creates = (await h.sim.control.stats()).calls.HcnCreateEndpoint ?? 0;
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => [r.attachment, r.outcome])).toEqual([['pod-detached@eth0', 'repaired']]);
    expect(String(await attachedTo(endpointId)).toLowerCase()).toBe(ns.toLowerCase());
    expect((await h.sim.control.stats()).calls.HcnCreateEndpoint ?? 0).toBe(creates);
    expect(recordFiles(h, 'intents')).toEqual([]);
    expect((await cni(h, { verb: 'CHECK', conf, containerId: 'pod-detached', netns: ns })).exitCode).toBe(0);
    expect((await status()).exitCode).toBe(0);
  });

  it('a re-attach HNS refused once (unreachable) is finished by the next repair, not left detached', async () => {
    const { ns, endpointId } = await addPod('pod-blip');
    await h.sim.control.restart();
    // The repair's create succeeds; its attach goes unanswered once (HNS blipping again).
    await h.sim.control.failCall('HcnModifyNamespace', HR.RPC_S_CALL_FAILED_DNE);
    const first = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(first.map((r) => r.outcome)).toEqual(['hns-unreachable']);
    expect(await attachedTo(endpointId)).toBeNull();
    expect((await status()).json).toMatchObject({ code: 51 });

    const second = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(second.map((r) => [r.outcome, r.detail])).toEqual([['repaired', 're-attached']]);
    expect(String(await attachedTo(endpointId)).toLowerCase()).toBe(ns.toLowerCase());
    expect((await status()).exitCode).toBe(0);
    expect((await cni(h, { verb: 'CHECK', conf, containerId: 'pod-blip', netns: ns })).exitCode).toBe(0);
  });
  it('an endpoint attached to another HCN namespace than its record names is not attached: STATUS says so, and the repair reports where it is and leaves it, asking HNS nothing, never healthy', async () => {
    const { ns, endpointId } = await addPod('pod-moved');
    const elsewhere = await newNamespace(h);
    const { api } = await h.deps.hns.api(servedConf());
    await api.detachNamespace(endpointId, ns);
    await api.attachNamespace(endpointId, elsewhere);
    expect(String(await attachedTo(endpointId)).toLowerCase()).toBe(elsewhere.toLowerCase());

    const before = await status();
    expect(before.json).toMatchObject({ code: 51 });
    expect(String(before.json!.details)).toMatch(/pod-moved@eth0: endpoint .* is not attached to namespace/);
    const seq = await lastSeq(h);
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    // The repair does not take the endpoint out of a namespace it did not put it in, nor ask HNS to put it in a second
    // one: it reports where the endpoint is, and no mutation reaches HNS.
    expect(report.map((r) => [r.attachment, r.outcome])).toEqual([['pod-moved@eth0', 'attached-elsewhere']]);
    expect(report[0]!.detail).toContain(`attached to HCN namespace ${elsewhere}`);
    expect(await mutationsSince(h, seq)).toEqual([]);
    expect(recordFiles(h, 'intents')).toEqual([]);
    expect(String(await attachedTo(endpointId)).toLowerCase()).toBe(elsewhere.toLowerCase());
    expect((await status()).json).toMatchObject({ code: 51 });
  });
});

describe('an endpoint HNS itself shows failed', () => {
  it.each([
    [5, 'Degraded'],
    [6, 'Destroyed'],
  ])(
    'an attached endpoint HNS shows in state %i (%s) is hns-failed: STATUS says 51 naming it, repair reports it, never healthy',
    async (state, name) => {
      const { ns, endpointId } = await addPod(`pod-${name.toLowerCase()}`);
      await h.sim.control.setEndpointState(endpointId, state);
      expect(String(await attachedTo(endpointId)).toLowerCase()).toBe(ns.toLowerCase());
      const now = await status();
      expect(now.json).toMatchObject({ code: 51 });
      expect(String(now.json!.details)).toContain(`HNS shows endpoint ${endpointId} as ${name}`);
      const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
      expect(report.map((r) => r.outcome)).toEqual(['hns-failed']);
    },
  );
});
