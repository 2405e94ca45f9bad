/**
 * What one look of the node agent's doctor costs HNS, counted by the simulator: each endpoint is read once, in the
 * endpoint listing (its DNS and policies are in that listing's documents), so a pod more costs only the reads of its
 * namespace (the namespace listing opens and queries each), never an open and a query of its endpoint besides.
 */
import { parseNetConf } from '../../src/cni/config';
import { NodeDoctor } from '../../src/service/agent/node-doctor';
import { silentLogger } from '../../src/log/logger';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { hostLocal, newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(90_000);

/** The calls of one look (the second: the first also learns the host's HNS version) once there are this many pods. */
async function oneLook(pods: number): Promise<Record<string, number>> {
  const raw = bridgeConf({ ipam: hostLocal(h), stateDir: h.stateDir, hnsTimeoutSeconds: 10 });
  const have = (await h.sim.control.dump()).endpoints.length;
  for (let i = have; i < pods; i++) {
    const r = await cni(h, { verb: 'ADD', conf: raw, containerId: `p${i}`, netns: await newNamespace(h) });
    expect(r.exitCode).toBe(0);
  }
  const conf = parseNetConf(raw, { platform: 'linux', defaults: { stateDir: h.stateDir }, verb: 'ADD' });
  const doctor = new NodeDoctor({ deps: h.deps, platform: 'linux' });
  await doctor.run(conf, silentLogger);
  const before = (await h.sim.control.stats()).calls as Record<string, number>;
  const findings = await doctor.run(conf, silentLogger);
  expect(findings.filter((f) => f.severity !== 'info')).toEqual([]);
  const after = (await h.sim.control.stats()).calls as Record<string, number>;
  const out: Record<string, number> = {};
  for (const [op, n] of Object.entries(after)) if (n > (before[op] ?? 0)) out[op] = n - (before[op] ?? 0);
  return out;
}

it("a look reads each endpoint once (in the listing): a pod more costs its namespace's two reads, nothing of its endpoint's", async () => {
  const two = await oneLook(2);
  const eight = await oneLook(8);
  const growth = Object.fromEntries(
    Object.keys({ ...two, ...eight })
      .map((op) => [op, (eight[op] ?? 0) - (two[op] ?? 0)] as const)
      .filter(([, n]) => n !== 0),
  );
  expect(growth).toEqual({ HcnOpenNamespace: 6, HcnQueryNamespaceProperties: 6 });
  expect(two['HNSCall GET /endpoints']).toBe(1);
  expect(Object.keys(two).filter((op) => /Endpoint/.test(op) && op !== 'HNSCall GET /endpoints')).toEqual([]);
});
