/**
 * sweep() re-judges each condemned object against the state as it is just before deleting it: no lock is held
 * across HNS calls, so an ADD may claim an owner between the audit's listing and the delete. Deterministic: HNS
 * holds the sweep's first HNS call (a hang), the owners are claimed meanwhile, and only then does HNS go on. The
 * object already being removed is gone; the other one must be left alone.
 */
import * as fs from 'fs';
import * as path from 'path';
import { V2Api, type HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { loadNative } from '../../src/hns/native';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import type { AttachmentRecord } from '../../src/state/records';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { DETACH_OP, hungOn, newNamespace } from '../plugin/support';
import { endpointName, shortNameOfPreviousVersion } from '../../src/orphans/ownership';
import { attachmentRecord, intentRecord } from '../helpers/state-records';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const PODS = ['pod-x', 'pod-y'];

it('leaves alone an orphan that an ADD claimed after the listing, while the sweep was busy with another', async () => {
  const conf = bridgeConf({ cniVersion: '1.1.0' });
  for (const pod of PODS)
    expect((await cni(h, { verb: 'ADD', conf, containerId: pod, netns: await newNamespace(h) })).exitCode).toBe(0);
  const os = hostOs(loadNative().native);
  const store = new StateStore(h.stateDir, { os });
  // Both pods become orphans: their records are gone and a DEL tombstoned them (HNS refused its deletes).
  const records = PODS.map((pod) => store.getAttachment({ containerId: pod, ifname: 'eth0' })!);
  for (const r of records) {
    fs.rmSync(path.join(h.stateDir, 'attachments', `${r.containerId}@eth0.json`));
    // As deleteByRecord tombstones a refused delete: naming the endpoint by id.
    await store.tombstone(r, 'DEL refused', {
      extra: [{ kind: 'endpoint', name: r.endpoint.name, id: r.endpoint.id }],
    });
  }

  // The sweep detaches each orphan endpoint first; HNS holds the first detach.
  await h.sim.control.hang(DETACH_OP);
  const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 60 }));
  const running = audit({ api, store, os, log: silentLogger, graceMs: 60_000 });
  await hungOn(h.sim.control, DETACH_OP);
  // Meanwhile both pods are committed again (an ADD of each owner), naming the very same endpoints.
  for (const r of records) expect(await store.commitAttachment(r as AttachmentRecord)).toBe('committed');
  await h.sim.control.release();
  const report = await running;

  expect(report.counts.orphan).toBe(2);
  expect(report.sweep!.deleted).toHaveLength(1);
  expect(report.sweep!.skipped.map((s) => s.reason)).toEqual(['claimed since the listing']);
  const left = (await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase());
  const skipped = report.sweep!.skipped[0]!.object.id.toLowerCase();
  expect(left).toContain(skipped);
  expect(left).not.toContain(report.sweep!.deleted[0]!.id.toLowerCase());
});

it("leaves alone an orphan whose owner's record appeared unreadable after the listing (quarantined: protected)", async () => {
  const conf = bridgeConf({ cniVersion: '1.1.0' });
  for (const pod of PODS)
    expect((await cni(h, { verb: 'ADD', conf, containerId: pod, netns: await newNamespace(h) })).exitCode).toBe(0);
  const os = hostOs(loadNative().native);
  const store = new StateStore(h.stateDir, { os });
  const recordFile = (pod: string) => path.join(h.stateDir, 'attachments', `${pod}@eth0.json`);
  for (const pod of PODS) {
    const r = store.getAttachment({ containerId: pod, ifname: 'eth0' })!;
    fs.rmSync(recordFile(pod));
    await store.tombstone(r, 'DEL refused', {
      extra: [{ kind: 'endpoint', name: r.endpoint.name, id: r.endpoint.id }],
    });
  }

  await h.sim.control.hang(DETACH_OP);
  const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 60 }));
  const running = audit({ api, store, os, log: silentLogger, graceMs: 60_000 });
  await hungOn(h.sim.control, DETACH_OP);
  // Meanwhile a record of each owner appears that cannot be read (a torn write, say): its owner may be live.
  for (const pod of PODS) fs.writeFileSync(recordFile(pod), '{"kind":"attachm');
  await h.sim.control.release();
  const report = await running;

  expect(report.counts.orphan).toBe(2);
  expect(report.sweep!.deleted).toHaveLength(1);
  expect(report.sweep!.skipped).toHaveLength(1);
  const left = (await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase());
  expect(left).toEqual([report.sweep!.skipped[0]!.object.id.toLowerCase()]);
});

it('leaves alone a leak of an owner the state did not know at the listing, once an ADD of that owner claims it', async () => {
  // Two endpoints named for pod-x and pod-y with nothing of either in the state (a wiped state directory, say):
  // orphans by name. While the sweep is held in its first delete, an ADD of pod-y writes its intent.
  const conf = bridgeConf({ cniVersion: '1.1.0' });
  expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-net', netns: await newNamespace(h) })).exitCode).toBe(0);
  const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 60 });
  const [network] = (await h.sim.control.dump()).networks;
  const leaked = new Map<string, string>();
  for (const pod of PODS) {
    const name = endpointName({ containerId: pod, ifname: 'eth0' });
    leaked.set(pod, String((await hcn.createEndpoint(String(network!.ID), { Name: name })).ID));
  }
  const os = hostOs(loadNative().native);
  const store = new StateStore(h.stateDir, { os });

  await h.sim.control.hang('HcnDeleteEndpoint');
  const api = new V2Api(hcn);
  const running = audit({ api, store, os, log: silentLogger, graceMs: 60_000 });
  await hungOn(h.sim.control, 'HcnDeleteEndpoint');
  // (an ADD retried after the leak: its intent plans the endpoint it will find or replace)
  for (const pod of PODS) {
    const owner = { containerId: pod, ifname: 'eth0' };
    const intent = intentRecord(`claim-${pod}`, { deadline: Date.now() + 60_000, owner });
    intent.planned = [{ kind: 'endpoint', name: endpointName(owner), id: leaked.get(pod)! }];
    await store.writeIntent(intent);
  }
  await h.sim.control.release();
  const report = await running;

  expect(report.counts.orphan).toBe(2);
  expect(report.sweep!.deleted).toHaveLength(1);
  expect(report.sweep!.skipped).toHaveLength(1);
  const left = (await h.sim.control.dump()).endpoints.map((e) => String(e.Name));
  expect(left).toContain(report.sweep!.skipped[0]!.object.name);
  expect(left).not.toContain(report.sweep!.deleted[0]!.name);
});

it("re-judges a previous-version name two owners share against the whole state: the other owner's new record keeps it", async () => {
  // Two container ids whose 48-bit tags of the previous version collide (plugin/owner-collision.test.ts).
  const a = { containerId: '5e1f0c2d9a7b4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e800000000017afdc9', ifname: 'eth0' };
  const b = { containerId: '5e1f0c2d9a7b4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e80000000003efec01', ifname: 'eth0' };
  const dir = fs.mkdtempSync(path.join(h.tmp, 'weak-'));
  const store = new StateStore(dir, { os: hostOs() });
  await store.tombstone(a, 'DEL without a committed attachment');
  const listed = [
    { id: 'e-first', name: endpointName({ containerId: 'gone', ifname: 'eth0' }), networkId: 'n', ips: [] },
    { id: 'e-shared', name: shortNameOfPreviousVersion('endpoint', b), networkId: 'n', ips: [] },
  ];
  const deleted: string[] = [];
  const api = {
    listNetworks: async () => [],
    listEndpoints: async () => listed.filter((e) => !deleted.includes(e.id)),
    deleteEndpoint: async (id: string) => {
      // While the sweep deletes the first orphan, B's ADD commits, naming the shared-name endpoint by id.
      if (id === 'e-first') await store.commitAttachment({ ...attachmentRecord({ endpointId: 'e-shared' }), ...b });
      deleted.push(id);
      return 'deleted' as const;
    },
  } as unknown as HnsApi;
  const report = await audit({ api, store, os: hostOs(), log: silentLogger, graceMs: 60_000 });
  expect(report.counts.orphan).toBe(2);
  expect(deleted).toEqual(['e-first']);
  expect(report.sweep!.skipped.map((s) => s.object.id)).toEqual(['e-shared']);
});
