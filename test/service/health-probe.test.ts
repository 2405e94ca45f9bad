/**
 * The DaemonSet's exec probes, run as the manifest runs them (`hcn-cni service --probe liveness|readiness`, here the
 * unbundled executable against the simulator): liveness passes while the service answers, whatever HNS does;
 * readiness also needs HNS answering (the node agent's view) and the service still accepting. No service: both fail.
 * Each answer is one line.
 */
import { spawn } from 'child_process';
import * as path from 'path';
import { judgeProbe } from '../../src/service/observability/probes';
import type { ServiceStatus } from '../../src/service/service';
import { bridgeConf, CLI, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type RunningService } from './support';

let h: Harness;
useHarness({}, (x) => (h = x));
let service: RunningService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

function probe(kind: string, address: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'service', '--probe', kind], {
      env: { PATH: process.env.PATH, HCN_CNI_SERVICE: address, HCN_SIM: h.sim.address },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

it('liveness and readiness pass while the service serves and HNS answers', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '1']);
  const live = await probe('liveness', service.address);
  expect(live).toEqual({ code: 0, out: expect.stringMatching(/^liveness: ok: serving at .* \(pid \d+\)\n$/) });
  const ready = await probe('readiness', service.address);
  expect(ready).toEqual({ code: 0, out: expect.stringMatching(/^readiness: ok: .*accepting, HNS answering\n$/) });
});

it('while HNS does not answer, readiness fails and liveness still passes; readiness passes again once it answers', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '1']);
  // One pod's ADD and DEL: the service now knows a configuration, and its node agent watches HNS for it.
  const bin = makeBin(h);
  const ns = await newNamespace(h);
  for (const verb of ['ADD', 'DEL'] as const)
    expect(
      (await viaShim(h, bin, service.address, { verb, conf: bridgeConf(), containerId: 'p', netns: ns })).exitCode,
    ).toBe(0);
  // Down until both probes have been asked (an outage of fixed length could end before a slow probe came); a restart
  // without down time then ends it.
  await h.sim.control.restart({ downMs: 120_000 });
  await until(
    async () => ((await service!.status()).agent.hnsFailingSince ? true : undefined),
    20_000,
    'HNS seen down',
  );
  const ready = await probe('readiness', service.address);
  expect(ready).toEqual({
    code: 1,
    out: expect.stringMatching(/^readiness: failed: HNS has not answered since \S+\n$/),
  });
  expect((await probe('liveness', service.address)).code).toBe(0);
  await h.sim.control.restart({ downMs: 0 });
  await until(
    async () => ((await service!.status()).agent.hnsFailingSince === undefined ? true : undefined),
    40_000,
    'HNS seen back',
  );
  expect((await probe('readiness', service.address)).code).toBe(0);
}, 90_000);

it('no service: both fail, in one line', async () => {
  const address = path.join(h.tmp, 'nobody.sock');
  for (const kind of ['liveness', 'readiness']) {
    const r = await probe(kind, address);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(new RegExp(`^${kind}: failed: no service at .*nobody\\.sock \\(.*\\)\\n$`));
  }
});

it('readiness fails once the service stopped accepting at its abandoned-call bound', () => {
  const s = {
    address: 'a',
    pid: 1,
    abandoned: { count: 256, bound: 256, byOp: [] },
    agent: { audits: 0 },
  } as unknown as ServiceStatus;
  expect(judgeProbe('readiness', s)).toEqual({
    ok: false,
    reason: 'not accepting: 256 abandoned HCN calls reached the bound 256',
  });
  expect(judgeProbe('liveness', s).ok).toBe(true);
});

it("readiness, when the probe knows its pod, fails unless the service answering is that pod's; liveness passes", () => {
  const s = (pod?: string) =>
    ({
      address: 'a',
      pid: 1,
      ...(pod ? { pod } : {}),
      abandoned: { count: 0, bound: 256, byOp: [] },
      agent: { audits: 0 },
    }) as unknown as ServiceStatus;
  expect(judgeProbe('readiness', s('p1'), 'p1').ok).toBe(true);
  expect(judgeProbe('readiness', s('p2'), 'p1')).toEqual({
    ok: false,
    reason: "the service at a (pid 1) is pod p2's, not this pod's (p1)",
  });
  expect(judgeProbe('readiness', s(), 'p1')).toEqual({
    ok: false,
    reason: "the service at a (pid 1) is not one of a pod, not this pod's (p1)",
  });
  // A probe that knows no pod (run by hand) judges the service whoever it is.
  expect(judgeProbe('readiness', s('p2')).ok).toBe(true);
  expect(judgeProbe('liveness', s('p2'), 'p1').ok).toBe(true);
});
