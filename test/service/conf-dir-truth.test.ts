/**
 * `serve --conf-dir`: the configuration directory is the truth for the networks it names. The node agent is handed
 * what the directory holds at each read (src/service/agent/conf-dir.ts); an edited conflist replaces the configuration the
 * service holds for that state directory and network (`"repair": true` → `false` takes effect: no repair after HNS
 * restarts), and a removed one is no longer served (no audit, health check or repair), while a file read unchanged
 * leaves a verb's configuration of the same network in place.
 */
import * as path from 'path';
import { confFromPlugin } from '../../src/cni/conf-list';
import type { IpamClient, NetConf } from '../../src/cni/types';
import { silentLogger } from '../../src/log/logger';
import { pluginDeps } from '../../src/plugin/deps';
import { NodeAgent } from '../../src/service/agent/node-agent';
import { ServedConfigs } from '../../src/service/served-configs';
import { bridgeConf, cni, CNI_BIN, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

type Served = { conf: NetConf; ipam: IpamClient };

/** What conf-dir.ts reads from a conflist holding this plugin configuration. */
const read = (extra: Record<string, unknown>): Served =>
  confFromPlugin(
    { ...bridgeConf({ stateDir: h.stateDir }), ...extra },
    { platform: 'linux', defaults: { stateDir: h.stateDir }, path: [CNI_BIN] },
  );

let agent: NodeAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

it('an edited conflist replaces what the service holds ("repair": false takes effect); a removed one stops being served', async () => {
  // The pod was added by the standalone executable: no verb of this network reaches the service.
  expect(
    (await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'p1', netns: await newNamespace(h) })).exitCode,
  ).toBe(0);
  const rt = pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims') });
  let dir: Served[] = [read({ repair: true, auditIntervalSeconds: 1 })];
  const repairs: string[] = [];
  const served = new ServedConfigs();
  agent = new NodeAgent({
    deps: rt,
    served,
    log: silentLogger,
    probeMs: 0,
    tickMs: 10,
    discover: () => dir,
    repair: async (s) => (repairs.push(s.conf.name), []),
  });
  agent.start();
  const health = () => agent!.status().health.find((n) => n.network === 'cbr0');
  await until(() => (health()?.counts.healthy === 1 ? true : undefined), 10_000, 'the pod checked healthy');
  // The operator turns repair off; the directory is read again.
  dir = [read({ repair: false, auditIntervalSeconds: 1 })];
  // Two health checks that end after the edit: the second began after it (one pass at a time).
  const edited = new Date().toISOString();
  const first = await until(() => (health()!.checkedAt > edited ? health()!.checkedAt : undefined), 10_000, 'a visit');
  await until(() => (health()!.checkedAt > first ? true : undefined), 10_000, 'a visit begun after the edit');
  await h.sim.control.restart({ downMs: 0 });
  // A visit after the restart judges the pod (and would have repaired it in the same visit).
  await until(() => (health()?.counts['endpoint-missing'] === 1 ? true : undefined), 10_000, 'the missing endpoint');
  expect([repairs, (await h.sim.control.dump()).endpoints]).toEqual([[], []]);
  // The operator removes the conflist: nothing of it is served or reported any more.
  dir = [];
  await until(() => (served.confs().length === 0 ? true : undefined), 10_000, 'the removal');
  await until(() => (agent!.status().health.length === 0 ? true : undefined), 10_000, 'its health dropped');
});

it("a file read unchanged leaves a verb's configuration in place; an edit replaces it; a verb after a removal serves it again", () => {
  const rt = new ServedConfigs();
  const file = read({ repair: true });
  rt.fromDir([file]);
  const verbs = { ...read({ repair: true }), conf: { ...read({ repair: true }).conf, hnsTimeoutSeconds: 7 } };
  rt.served(verbs);
  rt.fromDir([file]);
  expect(rt.confs().map((c) => c.hnsTimeoutSeconds)).toEqual([7]);
  rt.fromDir([read({ repair: false })]);
  expect(rt.confs().map((c) => [c.repair, c.hnsTimeoutSeconds])).toEqual([[false, file.conf.hnsTimeoutSeconds]]);
  rt.fromDir([]);
  expect(rt.confs()).toEqual([]);
  rt.served(verbs);
  expect(rt.confs().map((c) => c.hnsTimeoutSeconds)).toEqual([7]);
});
