/**
 * Repair, the plugin half: after an HNS restart (hcn-sim restart) repairAttachments re-creates every recorded
 * pod's endpoint with its recorded id, addresses, MAC and policies and re-attaches it as it was attached (HCN
 * namespace; HCS hot-add for a Docker-style sandbox), one pod at a time, IPAM untouched; CHECK then passes and STATUS
 * is 0. A pod whose namespace is gone too is reported and its record left; a record without the recorded spec (an
 * older version's) is reported; a repair racing a DEL of the same pod leaves nothing in HNS or the state.
 */
import * as fs from 'fs';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { sameId, V2Api } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import type { Logger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { repairAttachments, type PodRepair } from '../../src/plugin/verbs/repair';
import { StateIoError } from '../../src/state/io-error';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { hungOn, newNamespace, recordFiles, until } from './support';

let h: Harness;
const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-BB-00-02' };
/** A delegated-NIC configuration of that NIC, with repair on. */
const NIC_CONF = {
  cniVersion: '1.1.0',
  name: 'nics',
  type: 'hcn-cni',
  mode: 'delegatedNic',
  subnet: '10.20.1.0/24',
  repair: true,
  runtimeConfig: { mac: NIC.MacAddress },
};
useHarness({ adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-BB-00-01' }, NIC] }, (x) => (h = x));
jest.setTimeout(30_000);

const conf = bridgeConf({ cniVersion: '1.1.0', repair: true, dns: { nameservers: ['10.96.0.10'] } });

async function add(containerId: string, netns: string): Promise<Record<string, unknown>> {
  const out = await cni(h, { verb: 'ADD', conf, containerId, netns });
  expect(out.exitCode).toBe(0);
  return out.json!;
}

/** What must come back after a repair: id, addresses, MAC, policies, attach — per endpoint name. */
async function endpoints(): Promise<Record<string, unknown>> {
  const dump = await h.sim.control.dump();
  return Object.fromEntries(
    dump.endpoints.map((e) => [
      e.Name,
      {
        id: String(e.ID).toLowerCase(),
        ips: e.IpConfigurations ?? e.IPAddress,
        mac: e.MacAddress,
        policies: e.Policies,
        dns: e.Dns,
        routes: e.Routes,
      },
    ]),
  );
}

function servedConf() {
  const c = h.served.confs().find((x) => x.stateDir === h.stateDir);
  if (!c) throw new Error('no configuration served');
  return c;
}

const verb = (v: 'CHECK' | 'STATUS' | 'DEL', containerId?: string, netns?: string) =>
  cni(h, { verb: v, conf, ...(containerId ? { containerId } : {}), ...(netns !== undefined ? { netns } : {}) });

describe('repair after an HNS restart', () => {
  it('restores every recorded pod (namespace and Docker-style), reports the one whose namespace is gone; CHECK passes, STATUS 0 once that pod is deleted', async () => {
    const ns1 = await newNamespace(h);
    const ns2 = await newNamespace(h);
    await add('pod-ns', ns1);
    await add('pod-gone', ns2);
    await add('pod-docker', 'none');
    const before = await endpoints();
    const records = Object.fromEntries(
      recordFiles(h, 'attachments').map((f) => [f, fs.readFileSync(path.join(h.stateDir, 'attachments', f), 'utf8')]),
    );
    expect(Object.keys(before)).toHaveLength(3);

    await h.sim.control.restart({ dropNamespaces: [ns2] });
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    expect((await verb('STATUS')).json).toMatchObject({ code: 51 });

    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => [r.attachment, r.outcome]).sort()).toEqual([
      ['pod-docker@eth0', 'repaired'],
      ['pod-gone@eth0', 'namespace-gone'],
      ['pod-ns@eth0', 'repaired'],
    ]);
    expect(report.find((r) => r.outcome === 'namespace-gone')?.detail).toContain(ns2);

    // The same id, addresses, MAC, policies, DNS and routes as before the restart; the gone pod's is not re-created.
    const goneName = Object.values(records)
      .map((t) => JSON.parse(t) as { containerId: string; endpoint: { name: string } })
      .find((r) => r.containerId === 'pod-gone')!.endpoint.name;
    const expected = { ...before };
    delete expected[goneName];
    expect(await endpoints()).toEqual(expected);
    // Re-attached as they were: the namespace lists its endpoint again, the sandbox container has its vNIC again.
    const dump = await h.sim.control.dump();
    expect(dump.computeSystems.find((s) => s.ID === 'pod-docker')?.Endpoints).toHaveLength(1);
    expect(await verb('CHECK', 'pod-ns', ns1)).toMatchObject({ exitCode: 0 });
    expect(await verb('CHECK', 'pod-docker', 'none')).toMatchObject({ exitCode: 0 });

    // The pod whose namespace is gone: reported, its record left as it was (the runtime's DEL removes it).
    const goneFile = recordFiles(h, 'attachments').find((f) => records[f]?.includes('pod-gone'))!;
    expect(fs.readFileSync(path.join(h.stateDir, 'attachments', goneFile), 'utf8')).toBe(records[goneFile]);
    expect(recordFiles(h, 'intents')).toEqual([]);
    expect((await verb('STATUS')).json).toMatchObject({ code: 51 });
    expect(await verb('DEL', 'pod-gone', ns2)).toMatchObject({ exitCode: 0 });
    expect(await verb('STATUS')).toMatchObject({ exitCode: 0 });

    // A second run finds nothing to do.
    expect(await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger })).toEqual([]);
  });

  it('delegated NIC: the non-persistent network the restart dropped is re-created with its recorded id and spec, then the endpoint', async () => {
    const nic = NIC_CONF;
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: nic, containerId: 'pod-nic', netns: ns })).exitCode).toBe(0);
    const strip = (n: Record<string, unknown>) => ({
      id: n.ID,
      name: n.Name,
      type: n.Type,
      flags: n.Flags,
      policies: n.Policies,
    });
    const dumpBefore = await h.sim.control.dump();
    const netBefore = dumpBefore.networks.map(strip);
    const epBefore = await endpoints();
    await h.sim.control.restart();
    expect((await h.sim.control.dump()).networks).toEqual([]);
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => r.outcome)).toEqual(['repaired']);
    const dump = await h.sim.control.dump();
    expect(dump.networks.map(strip)).toEqual(netBefore);
    expect(dump.boundAdapters[NIC.Name]).toBe(dumpBefore.boundAdapters[NIC.Name]);
    expect(await endpoints()).toEqual(epBefore);
    expect((await cni(h, { verb: 'CHECK', conf: nic, containerId: 'pod-nic', netns: ns })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'DEL', conf: nic, containerId: 'pod-nic', netns: ns })).exitCode).toBe(0);
    expect((await h.sim.control.dump()).networks).toEqual([]);
  });

  it('delegated NIC after a reboot that gave the NIC another NetCfgInstanceId: the repaired record names the adapter as it is now', async () => {
    const nic = NIC_CONF;
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: nic, containerId: 'pod-nic', netns: ns })).exitCode).toBe(0);
    const file = path.join(
      h.stateDir,
      'attachments',
      recordFiles(h, 'attachments').find((f) => f.includes('pod-nic'))!,
    );
    const recorded = () =>
      (JSON.parse(fs.readFileSync(file, 'utf8')) as { adapter?: { interfaceGuid?: string } }).adapter;
    const before = recorded()!.interfaceGuid;
    expect(before).toMatch(/^\{/);
    await h.sim.control.restart();
    await h.sim.control.removeAdapter(NIC.Name);
    await h.sim.control.addAdapter(NIC);
    const now = (await h.sim.control.host()).adapters.find((a) => a.Name === NIC.Name)!.InterfaceGuid;
    expect(now).not.toBe(before);
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => r.outcome)).toEqual(['repaired']);
    expect(recorded()).toEqual({ name: NIC.Name, mac: NIC.MacAddress, interfaceGuid: now });
    expect((await cni(h, { verb: 'DEL', conf: nic, containerId: 'pod-nic', netns: ns })).exitCode).toBe(0);
  });

  it('a record without the recorded spec (written by an older version) is reported, not guessed at', async () => {
    const ns = await newNamespace(h);
    await add('pod-old', ns);
    const [file] = recordFiles(h, 'attachments');
    const p = path.join(h.stateDir, 'attachments', file!);
    const rec = JSON.parse(fs.readFileSync(p, 'utf8')) as Record<string, unknown>;
    delete rec.recreate;
    fs.writeFileSync(p, JSON.stringify(rec));
    await h.sim.control.restart();
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => r.outcome)).toEqual(['no-recorded-spec']);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it("bridge mode: a network HNS no longer has is reported network-gone and not created (it is the operator's, or every pod's)", async () => {
    const ns = await newNamespace(h);
    await add('pod-net-gone', ns);
    const [file] = recordFiles(h, 'attachments');
    const rec = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', file!), 'utf8')) as {
      network: { id: string };
    };
    await h.sim.control.restart();
    const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
    if ((await api.listNetworks()).some((n) => sameId(n.id, rec.network.id))) await api.deleteNetwork(rec.network.id);
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => r.outcome)).toEqual(['network-gone']);
    const dump = await h.sim.control.dump();
    expect(dump.networks).toEqual([]);
    expect(dump.endpoints).toEqual([]);
    expect(recordFiles(h, 'intents')).toEqual([]);
  });

  it('a Docker-style pod whose container is gone is reported, and nothing it created is left', async () => {
    await add('pod-dead', 'none');
    await h.sim.control.restart();
    await h.sim.control.removeContainer('pod-dead');
    const report = await repairAttachments({ deps: h.deps, conf: servedConf(), log: silentLogger });
    expect(report.map((r) => r.outcome)).toEqual(['container-gone']);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    expect(recordFiles(h, 'intents')).toEqual([]);
  });

  /** A repair whose endpoint create hangs in HNS while the pod's DEL arrives and queues behind it; its report. */
  async function repairRacingDel(log: Logger = silentLogger): Promise<PodRepair[]> {
    const ns = await newNamespace(h);
    await add('pod-race', ns);
    await h.sim.control.restart();
    // The repair's endpoint create hangs in HNS (holding HNS's mutation queue); the DEL arrives meanwhile and its
    // deletes queue behind it.
    await h.sim.control.hang('HcnCreateEndpoint');
    const repair = repairAttachments({ deps: h.deps, conf: servedConf(), log });
    await hungOn(h.sim.control, 'HcnCreateEndpoint');
    expect(recordFiles(h, 'intents')).toHaveLength(1);
    const del = verb('DEL', 'pod-race', ns);
    const queued = async () => ((await h.sim.control.stats()).pendingMutations > 1 ? true : undefined);
    await until(queued, 10_000, 'the DEL to queue behind it');
    // Once the create is done, the repair's attach (which opens the namespace; the DEL does not) waits until the DEL
    // has finished: otherwise which of the two reaches the endpoint first is the event loop's choice, and a repair
    // that attached and committed first would be "repaired" (and then deleted by the DEL, as correct, but not the
    // race this shows).
    await h.sim.control.hang('HcnOpenNamespace');
    await h.sim.control.release('HcnCreateEndpoint');
    expect((await del).exitCode).toBe(0);
    await h.sim.control.release('HcnOpenNamespace');
    const report = await repair;
    await h.sim.control.waitIdle();
    return report;
  }

  it('a repair racing a DEL of the same pod leaves nothing in HNS or in the state', async () => {
    const report = await repairRacingDel();
    expect(report).toHaveLength(1);
    expect(report[0]!.outcome).toBe('deleted-meanwhile');
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    for (const kind of ['attachments', 'intents', 'tombstones'] as const) expect(recordFiles(h, kind)).toEqual([]);
  });

  it('a repair racing a DEL whose tombstone cannot be removed: noted (logged, counted) and removed by a later audit', async () => {
    const failure = new StateIoError('tombstones/pod-race@eth0.json', 'permission denied', 'EACCES');
    const remove = jest.spyOn(StateStore.prototype, 'removeTombstone').mockRejectedValueOnce(failure);
    const warned: Array<Record<string, unknown>> = [];
    const log = { ...silentLogger, warn: (o: object) => void warned.push(o as Record<string, unknown>) };
    const logger = { ...log, child: () => logger } as unknown as Logger;
    let report: PodRepair[];
    try {
      report = await repairRacingDel(logger);
    } finally {
      remove.mockRestore();
    }
    expect(report.map((r) => r.outcome)).toEqual(['deleted-meanwhile']);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    // The tombstone stays, and the state directory's housekeeping note says so (the service counts these).
    const store = h.deps.stores.store(servedConf(), silentLogger);
    expect(recordFiles(h, 'tombstones')).toHaveLength(1);
    expect(warned).toContainEqual(
      expect.objectContaining({
        housekeeping: 'failed',
        what: 'removing the tombstone of pod-race@eth0 a voided repair left',
      }),
    );
    expect(store.housekeeping()).toEqual([
      expect.objectContaining({
        what: 'removing the tombstone of pod-race@eth0 a voided repair left',
        file: store.recordFile('tombstone', { containerId: 'pod-race', ifname: 'eth0' }),
        error: failure.message,
        failures: 1,
      }),
    ]);
    // The audit, once the tombstone's grace is over, removes it and forgets the note.
    const { api } = await h.deps.hns.api(servedConf());
    const later = () => Date.now() + 3_600_000;
    await audit({ api, store, os: hostOs(), log: silentLogger, now: later, graceMs: 60_000 });
    expect(recordFiles(h, 'tombstones')).toEqual([]);
    expect(store.housekeeping()).toEqual([]);
  });
  it('a DEL that finishes while the repair looks at the pod, before it claims: nothing created, no record', async () => {
    const ns = await newNamespace(h);
    await add('pod-gone', ns);
    await h.sim.control.restart();
    // The pod's DEL runs (and removes the record) while the repair asks HNS whether the namespace is still there.
    const rt = h.deps;
    const choose = rt.hns.api.bind(rt.hns);
    let delRan = false;
    rt.hns.api = async (c) => {
      const choice = await choose(c);
      const exists = choice.api.namespaceExists.bind(choice.api);
      choice.api.namespaceExists = async (id) => {
        if (!delRan) {
          delRan = true;
          expect((await verb('DEL', 'pod-gone', ns)).exitCode).toBe(0);
        }
        return exists(id);
      };
      return choice;
    };
    const report = await repairAttachments({ deps: rt, conf: servedConf(), log: silentLogger });
    expect(delRan).toBe(true);
    expect(report.map((r) => r.outcome)).toEqual(['deleted-meanwhile']);
    await h.sim.control.waitIdle();
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    for (const kind of ['attachments', 'intents'] as const) expect(recordFiles(h, kind)).toEqual([]);
  });
});
