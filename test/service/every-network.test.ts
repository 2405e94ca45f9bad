/**
 * Every network whose records are in a state directory is served by the service's background work, not only the
 * configuration served last: two conflists sharing one state directory both get their pods repaired after an HNS
 * restart, and each network's pods are reported by health in the service's status (`hcn-cni service`). A service
 * given the runtime's configuration directory (`--conf-dir`) serves the networks in it from its start, before any verb
 * of theirs arrives.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Service } from '../../src/service/service';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';
import { inProcessServices, viaShim } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);
const services = inProcessServices(() => h);

const netA = bridgeConf({ cniVersion: '1.1.0', name: 'net-a', repair: true, auditIntervalSeconds: 1 });
const netB = bridgeConf({
  cniVersion: '1.1.0',
  name: 'net-b',
  networkName: 'net-b-hns',
  subnet: '10.244.2.0/24',
  repair: true,
  auditIntervalSeconds: 1,
});

/** The service with every network's background work on a fast tick, the standalone executable's state directory. */
const start = (extra: { confDir?: string; metrics?: { host: string; port: number } } = {}): Promise<Service> =>
  services.start({ defaults: { stateDir: h.stateDir }, agent: { probeMs: 0, tickMs: 100 }, ...extra });

const endpointCount = async () => (await h.sim.control.dump()).endpoints.length;

describe('every network of a state directory is served', () => {
  it('two conflists sharing one state directory: both networks’ pods are repaired after an HNS restart', async () => {
    const s = await start();
    const pods: Array<[Record<string, unknown>, string, string]> = [];
    for (const [conf, id] of [
      [netA, 'pod-a'],
      [netB, 'pod-b'],
    ] as const) {
      const ns = await newNamespace(h);
      const add = await viaShim(h, services.bin, s.address, { verb: 'ADD', conf, containerId: id, netns: ns });
      expect({ id, exit: add.exitCode, out: add.json }).toMatchObject({ id, exit: 0 });
      pods.push([conf, id, ns]);
    }
    await h.sim.control.restart({ downMs: 0 });
    expect(await endpointCount()).toBe(0);
    await until(() => (s.status().tally.repairs.repaired === 2 ? true : undefined), 30_000, 'both networks repaired');
    expect(await endpointCount()).toBe(2);
    for (const [conf, id, netns] of pods) {
      const check = await viaShim(h, services.bin, s.address, { verb: 'CHECK', conf, containerId: id, netns });
      expect({ id, exit: check.exitCode }).toEqual({ id, exit: 0 });
    }
    await until(
      () => (s.status().agent.health.every((n) => n.counts.healthy === 1) ? true : undefined),
      30_000,
      'both networks healthy in the status',
    );
    expect(
      s
        .status()
        .agent.health.map((n) => n.network)
        .sort(),
    ).toEqual(['net-a', 'net-b']);
  });

  it('a network without repair: its pod is named in the status and the metrics as missing its endpoint, and left alone', async () => {
    const s = await start({ metrics: { host: '127.0.0.1', port: 0 } });
    const conf = { ...netA, repair: false };
    const ns = await newNamespace(h);
    expect(
      (await viaShim(h, services.bin, s.address, { verb: 'ADD', conf, containerId: 'pod-x', netns: ns })).exitCode,
    ).toBe(0);
    await h.sim.control.restart({ downMs: 0 });
    const named = await until(
      () => {
        const n = s.status().agent.health.find((x) => x.network === 'net-a');
        return n?.counts['endpoint-missing'] === 1 ? n : undefined;
      },
      30_000,
      'the pod reported as missing its endpoint',
    );
    expect(named.unhealthy).toEqual([
      expect.objectContaining({ attachment: 'pod-x@eth0', problem: 'endpoint-missing' }),
    ]);
    expect(await endpointCount()).toBe(0);
    const text = await (await fetch(s.status().metricsUrl!)).text();
    const pods = text.split('\n').filter((l) => l.startsWith('hcn_cni_pods{'));
    expect(pods).toContain(`hcn_cni_pods{state_dir="${h.stateDir}",network="net-a",health="endpoint-missing"} 1`);
    expect(pods).toContain(`hcn_cni_pods{state_dir="${h.stateDir}",network="net-a",health="healthy"} 0`);
  });

  it('with --conf-dir, pods recorded before the service started are repaired without any verb arriving', async () => {
    const ns = await newNamespace(h);
    // Added by the standalone executable (no service yet), then HNS restarts.
    for (const [conf, id] of [
      [netA, 'pod-a'],
      [netB, 'pod-b'],
    ] as const) {
      const netns = id === 'pod-a' ? ns : await newNamespace(h);
      expect((await cni(h, { verb: 'ADD', conf, containerId: id, netns })).exitCode).toBe(0);
    }
    await h.sim.control.restart({ downMs: 0 });
    const confDir = path.join(h.tmp, 'net.d');
    fs.mkdirSync(confDir);
    // The conflist form the runtime reads (libcni: each plugin gets the list's name and cniVersion).
    for (const conf of [netA, netB]) {
      const { name, cniVersion, ...plugin } = conf;
      fs.writeFileSync(
        path.join(confDir, `10-${String(name)}.conflist`),
        JSON.stringify({ cniVersion, name, plugins: [{ ...plugin, stateDir: h.stateDir }] }),
      );
    }
    fs.writeFileSync(
      path.join(confDir, '99-other.conflist'),
      JSON.stringify({ name: 'x', plugins: [{ type: 'foo' }] }),
    );
    const s = await start({ confDir });
    await until(() => (s.status().tally.repairs.repaired === 2 ? true : undefined), 30_000, 'both repaired, no verb');
    expect(await endpointCount()).toBe(2);
    expect(s.status().served).toBe(0);
  });
});
