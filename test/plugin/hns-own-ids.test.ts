/**
 * HNS may create an object under an id of its own rather than the one asked for (an HCN create with the null GUID
 * gets one HNS picks: microsoft/hcsshim hcn/hcnendpoint.go createEndpoint passes guid.GUID{}). The ADD's intent then
 * follows the id HNS gave before the ADD goes on, so an audit running while the ADD still attaches judges that
 * endpoint in-flight, not an orphan of the ADD's owner (seed 000's race, by another route). The "HNS" here is the
 * simulator behind an API whose endpoint create drops the id the plugin chose.
 */
import * as path from 'path';
import type { NetConf } from '../../src/cni/types';
import { V2Api, type EndpointInfo, type EndpointSpec, type NetworkInfo, type NetworkSpec } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import type { ApiChoice } from '../../src/plugin/api-version';
import { pluginDeps } from '../../src/plugin/deps';
import { HostHns } from '../../src/plugin/host-hns';
import { repairAttachments } from '../../src/plugin/verbs/repair';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { hungOn, newNamespace } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

/** A runtime whose HNS picks every endpoint's id itself. */
class HnsPicksIds extends HostHns {
  override async api(conf: Pick<NetConf, 'apiVersion' | 'hnsTimeoutSeconds'>): Promise<ApiChoice> {
    const choice = await super.api(conf);
    const real = choice.api;
    const api = Object.create(real) as typeof real;
    api.createEndpoint = (network: NetworkInfo, spec: EndpointSpec): Promise<EndpointInfo> =>
      real.createEndpoint(network, spec);
    return { ...choice, api };
  }
}

it('an ADD whose endpoint HNS created under an id of its own: an audit while it attaches judges that endpoint in-flight; the ADD commits it', async () => {
  h.deps = { ...pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims') }), hns: new HnsPicksIds() };
  const conf = bridgeConf({ cniVersion: '1.1.0', audit: false });
  const netns = await newNamespace(h);
  // Create the bridge network first, so the hung call below is the pod's attach.
  expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-first', netns: await newNamespace(h) })).exitCode).toBe(
    0,
  );
  await h.sim.control.hang('HcnModifyNamespace');
  const adding = cni(h, { verb: 'ADD', conf, containerId: 'pod-own-id', netns });
  await hungOn(h.sim.control, 'HcnModifyNamespace');
  const store = new StateStore(h.stateDir, { os: hostOs() });
  const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
  const report = await audit({ api, store, os: hostOs(), log: silentLogger, graceMs: 60_000, dryRun: true });
  const created = report.plan.judged.filter((j) => j.kind === 'endpoint' && j.owner?.containerId === 'pod-own-id');
  expect(created.map((j) => j.verdict)).toEqual(['in-flight']);
  await h.sim.control.release();
  const add = await adding;
  expect(add.exitCode).toBe(0);
  expect(store.getAttachment({ containerId: 'pod-own-id', ifname: 'eth0' })?.endpoint.id.toLowerCase()).toBe(
    created[0]!.id.toLowerCase(),
  );
});

it('a repair whose re-created endpoint HNS put under an id of its own: an audit while it attaches judges it in-flight; the repair commits it', async () => {
  h.deps = { ...pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims') }), hns: new HnsPicksIds() };
  const conf = bridgeConf({ cniVersion: '1.1.0', audit: false, repair: true });
  const netns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-repaired', netns })).exitCode).toBe(0);
  const served = h.served.confs().find((c) => c.stateDir === h.stateDir)!;
  // HNS restarts: the endpoint is gone, the namespace stays; the repair re-creates the endpoint, then attaches it.
  await h.sim.control.restart();
  await h.sim.control.hang('HcnModifyNamespace');
  const repairing = repairAttachments({ deps: h.deps, conf: served, log: silentLogger });
  await hungOn(h.sim.control, 'HcnModifyNamespace');
  const store = new StateStore(h.stateDir, { os: hostOs() });
  const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
  const report = await audit({ api, store, os: hostOs(), log: silentLogger, graceMs: 60_000, dryRun: true });
  const created = report.plan.judged.filter((j) => j.kind === 'endpoint' && j.owner?.containerId === 'pod-repaired');
  expect(created.map((j) => j.verdict)).toEqual(['in-flight']);
  await h.sim.control.release();
  expect((await repairing).map((r) => r.outcome)).toEqual(['repaired']);
});

/** …and every network's. */
class HnsPicksNetworkIds extends HnsPicksIds {
  override async api(conf: Pick<NetConf, 'apiVersion' | 'hnsTimeoutSeconds'>): Promise<ApiChoice> {
    const choice = await super.api(conf);
    const real = choice.api;
    const api = Object.create(real) as typeof real;
    api.createNetwork = (spec: NetworkSpec): Promise<NetworkInfo> => real.createNetwork(spec);
    return { ...choice, api };
  }
}

it('a delegated-NIC ADD whose NIC network HNS created under an id of its own: an audit before the endpoint exists judges that network in-flight', async () => {
  const nic = { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' };
  await h.sim.control.addAdapter(nic);
  h.deps = {
    ...pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims') }),
    hns: new HnsPicksNetworkIds(),
  };
  await h.sim.control.hang('HcnCreateEndpoint');
  const adding = cni(h, {
    verb: 'ADD',
    conf: delegatedNicConf(nic.MacAddress, { audit: false }),
    containerId: 'pod-nic',
    netns: await newNamespace(h),
  });
  await hungOn(h.sim.control, 'HcnCreateEndpoint');
  const store = new StateStore(h.stateDir, { os: hostOs() });
  const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
  const report = await audit({ api, store, os: hostOs(), log: silentLogger, graceMs: 60_000, dryRun: true });
  const network = report.plan.judged.filter((j) => j.kind === 'network' && j.owner?.containerId === 'pod-nic');
  expect(network.map((j) => j.verdict)).toEqual(['in-flight']);
  await h.sim.control.release();
  expect((await adding).exitCode).toBe(0);
});
