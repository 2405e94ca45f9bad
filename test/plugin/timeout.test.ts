/**
 * HNS that does not answer. With hnsTimeoutSeconds 1 and HcnCreateNetwork hanging (delegated-NIC mode),
 * the ADD (a CLI process) answers code 11 after about a second and leaves its intent on disk; HNS completes the
 * network once the hang is released; the next ADD for another pod on the same NIC finds it, sees that the intent's
 * process is gone, removes the network (audit) and succeeds. An HNS restart in the middle of an ADD is 11 as well,
 * and the retried ADD succeeds.
 *
 * The process also EXITS on time while HNS still hangs: the hung call runs on one of the addon's call threads, and
 * the CLI leaves through the addon's exitNow (commit 48240c8), never waiting for it.
 * A runtime waits for the exit, so without that hnsTimeoutSeconds would not bound the CNI call.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CLI, cniEnv, useHarness, type CniCall, type Harness } from '../helpers/cni-harness';
import { outcomeLines, recordFiles, until } from './support';
import { nicNetworkName } from '../../src/orphans/ownership';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] };

let h: Harness;
useHarness(HOST, (x) => (h = x));
// The pods' sandbox containers exist in HCS before their Docker-style ADD, as a runtime starts them first.
beforeEach(async () => {
  for (const id of ['pod-hung', 'pod-next', 'pod-r']) await h.sim.control.addContainer(id);
});

function conf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'nic',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: '10.10.2.0/24',
    runtimeConfig: { mac: NIC.MacAddress },
    ...extra,
  };
}

interface Running {
  pid: number;
  /** Resolves when the answer (one JSON line) is on stdout, with the ms since spawn. */
  answered: Promise<{ json: Record<string, unknown>; afterMs: number }>;
  /** Resolves when the process has exited. */
  exited: Promise<{ exitCode: number; afterMs: number; stdout: string; stderr: string }>;
}

/** The CLI as a child process, watched for its answer and its exit separately. */
function start(c: CniCall): Running {
  const t0 = Date.now();
  const child = spawn(process.execPath, [CLI], {
    env: { PATH: process.env.PATH, ...cniEnv(h, c) } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let answer: (v: { json: Record<string, unknown>; afterMs: number }) => void;
  const answered = new Promise<{ json: Record<string, unknown>; afterMs: number }>((r) => (answer = r));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.endsWith('\n'))
      answer({ json: JSON.parse(stdout) as Record<string, unknown>, afterMs: Date.now() - t0 });
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ exitCode: number; afterMs: number; stdout: string; stderr: string }>((r) =>
    child.on('close', (code) => r({ exitCode: code ?? -1, afterMs: Date.now() - t0, stdout, stderr })),
  );
  child.stdin.end(JSON.stringify({ stateDir: h.stateDir, logLevel: 'debug', ...c.conf }));
  return { pid: child.pid!, answered, exited };
}

const onNic = async () => {
  const d = await h.sim.control.dump();
  const id = d.boundAdapters[NIC.Name];
  return id ? d.networks.find((n) => n.ID === id) : undefined;
};
const accepted = async (op: string) => (await h.sim.control.stats()).calls[op] ?? 0;

describe('HNS hanging or restarting during an ADD', () => {
  it("hnsTimeoutSeconds 1 + a hung HcnCreateNetwork: 11 after ~1 s, intent kept; the next pod's ADD removes what HNS completed", async () => {
    await h.sim.control.hang('HcnCreateNetwork');
    const hung = start({ verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 1 }), containerId: 'pod-hung', netns: 'none' });
    const { json, afterMs } = await hung.answered;
    expect(json).toMatchObject({
      cniVersion: '1.1.0',
      code: 11,
      msg: expect.stringMatching(
        new RegExp(
          `^HNS did not answer while creating HNS network ${nicNetworkName({ containerId: 'pod-hung', ifname: 'eth0' })}: .*ERROR_TIMEOUT`,
        ),
      ),
    });
    // The configured 1 s bound answered, not the default 30 s one (far apart, so that a loaded machine's slow process
    // start cannot blur them); HNS itself never answered (the create is held until released below).
    expect(afterMs).toBeGreaterThanOrEqual(1000);
    expect(afterMs).toBeLessThan(20_000);
    // It exits too, while the create is still hanging in HNS.
    const done = await Promise.race([
      hung.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000)),
    ]);
    expect(done).toMatchObject({ exitCode: 1 });
    expect(done!.stderr).toMatch(/HNS did not answer; leaving the intent for the audit/);
    expect(outcomeLines(done!.stderr)).toEqual([
      expect.objectContaining({ verb: 'ADD', outcome: 11, containerId: 'pod-hung' }),
    ]);
    expect(recordFiles(h, 'intents')).toEqual(['pod-hung@eth0.json']);
    const intent = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'intents', 'pod-hung@eth0.json'), 'utf8')) as {
      pid: number;
      planned: Array<{ kind: string; name: string; id?: string }>;
    };
    expect(intent.pid).toBe(hung.pid);
    const plannedNet = intent.planned.find((p) => p.kind === 'network')!;
    expect(await accepted('HcnCreateNetwork')).toBe(1);
    expect(await onNic()).toBeUndefined(); // still hanging inside HNS

    // HNS finishes the create it accepted, after the ADD's process is gone.
    await h.sim.control.release();
    await h.sim.control.waitIdle();
    const leaked = await onNic();
    expect(leaked?.Name).toBe(plannedNet.name);
    expect(leaked?.ID.toLowerCase()).toBe(plannedNet.id?.toLowerCase());
    expect(recordFiles(h, 'intents')).toEqual(['pod-hung@eth0.json']);

    // Another pod on the same NIC: the audit removes the leak (its ADD's process is gone), then the ADD succeeds.
    const next = await start({
      verb: 'ADD',
      conf: conf({ hnsTimeoutSeconds: 1 }),
      containerId: 'pod-next',
      netns: 'none',
    }).exited;
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toMatch(new RegExp(`"audit":"deleted".*"id":"${leaked!.ID}"`, 'i'));
    expect(next.stderr).toMatch(new RegExp(`its process ${hung.pid} is gone`));
    expect((await onNic())?.Name).toMatch(nicNetworkName({ containerId: 'pod-next', ifname: 'eth0' }));
    expect((await h.sim.control.dump()).networks).toHaveLength(1);
  });

  it('an HNS restart in the middle of an ADD: 11; the retried ADD succeeds', async () => {
    await h.sim.control.hang('HcnCreateNetwork');
    const add = start({ verb: 'ADD', conf: conf({ hnsTimeoutSeconds: 60 }), containerId: 'pod-r', netns: 'none' });
    await until(
      async () => ((await accepted('HcnCreateNetwork')) === 1 ? true : undefined),
      10_000,
      'the ADD to reach HcnCreateNetwork',
    );
    const restarted = Date.now();
    // The outage's end as a bound read once the simulator answered (it set its own end before): never too early.
    const { downUntil } = await h.sim.control.restart({ downMs: 300 }).then(() => ({ downUntil: Date.now() + 300 }));
    const r = await add.exited;
    expect(Date.now() - restarted).toBeLessThan(30_000); // the restart ended the call, not the 60 s timeout
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 11,
      msg: expect.stringMatching(/^HNS did not answer while creating HNS network .*0x800706BF/i),
    });
    const create = (await h.sim.control.calls()).find((c) => c.op === 'HcnCreateNetwork')!;
    expect(create.fault).toMatch(/restart/);
    expect(await onNic()).toBeUndefined(); // the restart dropped the create

    await new Promise((res) => setTimeout(res, Math.max(0, downUntil - Date.now()) + 50));
    const retry = await start({
      verb: 'ADD',
      conf: conf({ hnsTimeoutSeconds: 10 }),
      containerId: 'pod-r',
      netns: 'none',
    }).exited;
    expect(retry.exitCode).toBe(0);
    expect((await onNic())?.Name).toMatch(nicNetworkName({ containerId: 'pod-r', ifname: 'eth0' }));
    expect(recordFiles(h, 'attachments')).toEqual(['pod-r@eth0.json']);
    expect(recordFiles(h, 'intents')).toEqual([]);
  });
});

describe('requests with different hnsTimeoutSeconds at once (the resident service)', () => {
  it("each keeps its own limit: a later request's 1 s does not cut short an earlier one's 60 s", async () => {
    // Request A (60 s) takes its facade and API first, then request B (1 s) arrives; both then wait on an HNS call
    // that takes 1.5 s. With one facade shared by the process, B's limit would have become A's as well.
    const slowHcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 60 });
    const slowApi = (await h.deps.hns.api({ apiVersion: 'auto', hnsTimeoutSeconds: 60 })).api;
    const quickHcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 1 });
    const quickApi = (await h.deps.hns.api({ apiVersion: 'auto', hnsTimeoutSeconds: 1 })).api;
    await h.sim.control.setLatency('HcnEnumerateNetworks', 1500);
    await h.sim.control.setLatency('HNSCall GET /networks', 1500);
    const settled = await Promise.allSettled([
      slowHcn.enumerateNetworks(),
      slowApi.listNetworks(),
      quickHcn.enumerateNetworks(),
      quickApi.listNetworks(),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const s of settled.slice(2))
      expect(String((s as PromiseRejectedResult).reason)).toContain('no answer from HNS within 1s');
    // One API choice per process still: the second request reused the first one's (one version query in all).
    expect((await h.sim.control.stats()).calls['HNSCall GET /globals/version']).toBe(1);
  });
});
