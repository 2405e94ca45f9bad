/**
 * GC racing the same pod's DEL: the audit lists an orphan endpoint attached to its namespace, the DEL detaches it
 * before the sweep does, and HNS answers the sweep's detach with HCN_E_ENDPOINT_NOT_ATTACHED. The endpoint is
 * detached, which is all the detach was for: the sweep goes on and deletes it, instead of failing the GC (108).
 * Deterministic: the DEL's detach runs between the listing (detect) and the sweep.
 */
import * as fs from 'fs';
import * as path from 'path';
import { V1Api, V2Api, type HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { loadNative } from '../../src/hns/native';
import { silentLogger } from '../../src/log/logger';
import { detect } from '../../src/orphans/detect';
import { sweep } from '../../src/orphans/sweep';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

describe.each([
  ['HCN (v2)', (hh: Harness): HnsApi => new V2Api(hh.deps.hns.hcn({ hnsTimeoutSeconds: 30 }))],
  ['HNS v1', (hh: Harness): HnsApi => new V1Api(hh.deps.hns.hcn({ hnsTimeoutSeconds: 30 }))],
])('an orphan endpoint detached by someone else between listing and sweep (%s)', (_name, makeApi) => {
  it('is deleted, and the sweep reports no failure', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-r', netns: ns })).exitCode).toBe(0);
    const store = new StateStore(h.stateDir, { os: hostOs(loadNative().native) });
    const rec = store.getAttachment({ containerId: 'pod-r', ifname: 'eth0' })!;
    // The pod's DEL has begun: its record is gone and its tombstone names the endpoint by id.
    fs.rmSync(path.join(h.stateDir, 'attachments', 'pod-r@eth0.json'));
    await store.tombstone(rec, 'DEL', { extra: [{ kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id }] });
    const api = makeApi(h);
    const plan = detect({
      networks: [],
      endpoints: await api.listEndpoints(),
      state: store.snapshot(),
      intentLive: new Map(),
    });
    expect(plan.endpoints.map((e) => [e.id.toLowerCase(), e.namespaceId?.toLowerCase()])).toEqual([
      [rec.endpoint.id.toLowerCase(), ns.toLowerCase()],
    ]);
    // The DEL detaches first.
    expect(await api.detachNamespace(rec.endpoint.id, ns)).toBe('deleted');
    const result = await sweep(plan, { api, stillOrphan: () => true, log: silentLogger });
    expect(result.failed).toEqual([]);
    expect(result.deleted.map((j) => j.id)).toEqual([plan.endpoints[0]!.id]);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });
});
