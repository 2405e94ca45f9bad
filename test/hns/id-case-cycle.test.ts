/**
 * Our id comparisons must not care about case: HNS itself answers in several (lowercase HCN ids,
 * uppercase v1 ids, namespace resources and SwitchGuid upper case: src/sim/views.ts). Here the simulator re-cases
 * every GUID of every answer (SimHost.idCase, `upper` and `mixed`), so the ids HNS lists never equal, as strings,
 * the ones the plugin recorded or sent; the whole cycle — ADD (with its audit), CHECK, a Docker-style ADD, GC with
 * a leak of ours, DEL — must still find its own objects, keep live ones and leave nothing behind.
 */
import * as fs from 'fs';
import * as path from 'path';
import { V2Api } from '../../src/hns/api';
import { endpointName } from '../../src/orphans/ownership';
import type { IdCase } from '../../src/sim';
import { bridgeConf, cni, stateFiles, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace } from '../plugin/support';

describe.each<IdCase>(['upper', 'mixed'])('HNS answering every id in %s case', (idCase) => {
  let h: Harness;
  useHarness({ idCase }, (x) => (h = x));

  const conf = () =>
    bridgeConf({ cniVersion: '1.1.0', name: 'k8s', networkName: 'cbr0', ipam: hostLocal(h) }) as Record<
      string,
      unknown
    >;
  const record = (id: string) =>
    JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', `${id}@eth0.json`), 'utf8')) as {
      endpoint: { id: string };
      netns: string;
    };
  const endpointsInHns = async () => (await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase()).sort();

  it('ADD, CHECK, Docker-style ADD, GC of a leak and of a stale pod, audit on ADD, DEL: nothing lost, nothing left', async () => {
    const nsA = await newNamespace(h);
    const nsB = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'a', netns: nsA })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'b', netns: nsB })).exitCode).toBe(0);
    const a = record('a').endpoint.id.toLowerCase();
    const b = record('b').endpoint.id.toLowerCase();
    // The answers really are re-cased (and, mixed, spelled differently on every answer).
    const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
    const listed = (await api.listEndpoints()).map((e) => e.id);
    expect(listed).toHaveLength(2);
    expect(listed.every((id) => id !== id.toLowerCase())).toBe(true);
    if (idCase === 'mixed') {
      const again = (await api.listEndpoints()).map((e) => e.id);
      expect(again.every((id, i) => id !== listed[i] && id.toLowerCase() === listed[i]!.toLowerCase())).toBe(true);
    }

    // CHECK finds the endpoint in its namespace (Resources' ids come back in the other case).
    for (const [id, netns] of [
      ['a', nsA],
      ['b', nsB],
    ] as const) {
      const check = await cni(h, { verb: 'CHECK', conf: conf(), containerId: id, netns });
      expect({ id, exit: check.exitCode, out: check.stdout }).toEqual({ id, exit: 0, out: '' });
    }

    // A Docker-style pod (netns none: hot attach through HCS, looked up by v1 GET /endpoints/{id}).
    const d = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'd', netns: 'none' });
    expect(d.exitCode).toBe(0);
    expect((await cni(h, { verb: 'CHECK', conf: conf(), containerId: 'd', netns: 'none' })).exitCode).toBe(0);

    // A leak of ours (an endpoint named like ours with no record): GC removes it and b, keeps a and d.
    const cbr0 = (await api.findNetworkByName('cbr0'))!;
    const ghost = (
      await api.createEndpoint(cbr0, {
        name: endpointName({ containerId: 'ghost', ifname: 'eth0' }),
        ips: [],
        dns: { servers: [], search: [] },
        policies: [],
      })
    ).id.toLowerCase();
    const gc = await cni(h, {
      verb: 'GC',
      conf: {
        ...conf(),
        'cni.dev/valid-attachments': [
          { containerID: 'a', ifname: 'eth0' },
          { containerID: 'd', ifname: 'eth0' },
        ],
      },
    });
    expect({ exit: gc.exitCode, out: gc.stdout }).toEqual({ exit: 0, out: '' });
    const afterGc = await endpointsInHns();
    expect(afterGc).toContain(a);
    expect(afterGc).not.toContain(b);
    expect(afterGc).not.toContain(ghost);
    expect(afterGc).toHaveLength(2); // a and d

    // Another ADD audits HNS: a's and d's endpoints are live (their records name them in another case).
    const nsC = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'c', netns: nsC })).exitCode).toBe(0);
    expect(await endpointsInHns()).toEqual(expect.arrayContaining([a]));
    expect(await endpointsInHns()).toHaveLength(3);
    expect((await cni(h, { verb: 'CHECK', conf: conf(), containerId: 'a', netns: nsA })).exitCode).toBe(0);

    // DEL everything: no endpoint, no attachment record, no address left.
    for (const [id, netns] of [
      ['a', nsA],
      ['c', nsC],
      ['d', 'none'],
    ] as const) {
      const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: id, netns });
      expect({ id, exit: del.exitCode }).toEqual({ id, exit: 0 });
    }
    expect(await endpointsInHns()).toEqual([]);
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/') || f.startsWith('intents/'))).toEqual([]);
    expect(heldIps(h, 'k8s')).toEqual({});
    const namespaces = (await h.sim.control.dump()).namespaces;
    for (const ns of namespaces) expect(ns.Resources ?? []).toEqual([]);
  });
});
