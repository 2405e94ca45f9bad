/**
 * The crash-point matrix: every HNS call and every state write of ADD and DEL, killed right there — HNS
 * calls by the simulator's kill-client fault (after HNS accepted the call, so it still completes), state writes by
 * the test-build crash hook — times the delete-during-create outcomes, followed by what a runtime does next.
 * Invariants after every case: no orphan left, no unreadable record, no IP allocated twice, every DEL exits 0, and
 * the next pod on the same NIC gets it.
 *
 * Delegated-NIC mode (the mode of seed 000) with a real delegated IPAM (Debian's host-local) and HCN namespaces.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { V2Api } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { loadNative } from '../../src/hns/native';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { StateStore } from '../../src/state/store';
import type { RaceMode } from '../../src/sim';
import { cniProcess, startHarness, type Harness, type ProcessOutcome } from '../helpers/cni-harness';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] };
const RACES: RaceMode[] = ['delete-wins', 'create-wins'];
/** The race outcome only matters where the killed call is a create HNS may finish after the DEL. */
const racesFor = (p: { op: string }): RaceMode[] => (/^HcnCreate/.test(p.op) ? RACES : ['delete-wins']);
type FollowUp = 'DEL then new ADD' | 'GC then new ADD';
const FOLLOW_UPS: FollowUp[] = ['DEL then new ADD', 'GC then new ADD'];

/** State writes of an ADD and of a DEL (with a record), as src/state names them. */
const ADD_STATE_POINTS = [
  'intent:tmp-written',
  'intent:written',
  'attachment:tmp-written',
  'attachment:written',
  'intent:before-remove',
  'intent:removed',
];
const DEL_STATE_POINTS = ['attachment:before-remove', 'attachment:removed'];

let h: Harness;
const rows: string[] = [];

beforeAll(async () => {
  h = await startHarness(HOST);
});
afterAll(async () => {
  await h.stop();
  // The table of points and outcomes, for the issue note.
  process.stdout.write(
    `\n| phase | crash point | race | follow-up | killed | DEL exit | new ADD | orphans | records | IPs |\n|---|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
});

function conf(): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'nic',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    hnsTimeoutSeconds: 10,
    runtimeConfig: { mac: NIC.MacAddress },
    ipam: {
      type: 'host-local',
      dataDir: path.join(h.tmp, 'ipam'),
      ranges: [[{ subnet: '10.10.2.0/24', rangeStart: '10.10.2.10', rangeEnd: '10.10.2.50', gateway: '10.10.2.1' }]],
    },
  };
}

async function namespace(): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

async function run(verb: 'ADD' | 'DEL', containerId: string, netns: string, crashAt?: string): Promise<ProcessOutcome> {
  return cniProcess(h, { verb, conf: conf(), containerId, netns }, crashAt ? { HCN_CNI_TEST_CRASH_AT: crashAt } : {});
}

async function gc(valid: Array<{ containerID: string; ifname: string }>): Promise<ProcessOutcome> {
  return cniProcess(h, { verb: 'GC', conf: { ...conf(), 'cni.dev/valid-attachments': valid } });
}

/** A runtime retries a failed ADD; 11 means "try again later". */
async function addLikeRuntime(
  containerId: string,
  netns: string,
): Promise<{ exit: number; tries: number; out: string }> {
  for (let tries = 1; ; tries++) {
    const r = await run('ADD', containerId, netns);
    // The executable exits 1 for every CNI error; the code the runtime retries on is in the error JSON.
    if (r.json?.code !== 11 || tries === 3) return { exit: r.exitCode, tries, out: r.stdout };
    await h.sim.control.waitIdle();
  }
}

interface Check {
  orphans: number;
  /** What they are, for the failure message. */
  orphanNames: string[];
  unreadable: number;
  ipProblems: string[];
  networksOnNic: number;
}

/** The invariants, measured after HNS has finished everything it accepted. */
async function invariants(live: string[]): Promise<Check> {
  await h.sim.control.waitIdle();
  const native = loadNative().native;
  const store = new StateStore(h.stateDir, { os: hostOs(native) });
  const report = await audit({
    api: new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 })),
    store,
    os: hostOs(native),
    log: silentLogger,
    dryRun: true,
    graceMs: 0,
  });
  const snap = store.snapshot();
  const dump = await h.sim.control.dump();
  const ipProblems: string[] = [];
  const epIps = dump.endpoints.flatMap((e) =>
    ((e.IpConfigurations as Array<{ IpAddress: string }> | undefined) ?? []).map((c) => c.IpAddress),
  );
  if (new Set(epIps).size !== epIps.length) ipProblems.push(`endpoints share an IP: ${epIps.join(',')}`);
  const ipamDir = path.join(h.tmp, 'ipam', 'nic');
  const held = fs.existsSync(ipamDir) ? fs.readdirSync(ipamDir).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f)) : [];
  const owners = held.map((ip) => fs.readFileSync(path.join(ipamDir, ip), 'utf8').split(/\r?\n/)[0]!);
  if (new Set(owners).size !== owners.length) ipProblems.push(`a container holds two IPs: ${owners.join(',')}`);
  for (const o of owners) if (!live.includes(o)) ipProblems.push(`IPAM still holds an IP for ${o}`);
  return {
    orphans: report.counts.orphan + report.counts.protected + report.counts['in-flight'],
    orphanNames: report.plan.judged
      .filter((j) => j.verdict !== 'live' && j.verdict !== 'foreign')
      .map((j) => `${j.verdict} ${j.kind} ${j.name}: ${j.reason}`),
    unreadable: snap.quarantined.length,
    ipProblems,
    networksOnNic: dump.boundAdapters[NIC.Name] ? 1 : 0,
  };
}

interface Point {
  kind: 'hns' | 'state';
  op: string;
  nth: number;
}

/** The HNS calls a process made, in order, as (op, nth) pairs — discovered from a clean run's call log. */
async function hnsPoints(pid: number): Promise<Point[]> {
  const seen = new Map<string, number>();
  return (await h.sim.control.calls())
    .filter((c) => c.pid === pid)
    .sort((a, b) => a.seq - b.seq)
    .map((c) => {
      const nth = (seen.get(c.op) ?? 0) + 1;
      seen.set(c.op, nth);
      return { kind: 'hns' as const, op: c.op, nth };
    });
}

async function freshHost(race: RaceMode): Promise<void> {
  await h.reset();
  // Creates take long enough for a DEL to arrive while HNS is still on them: the race of seed 000.
  await h.sim.control.setLatency('HcnCreateNetwork', 300);
  await h.sim.control.setLatency('HcnCreateEndpoint', 150);
  await h.sim.control.setRace(race);
}

async function discover(): Promise<{ add: Point[]; del: Point[] }> {
  await freshHost('delete-wins');
  const ns = await namespace();
  const add = await run('ADD', 'probe', ns);
  expect(add.exitCode).toBe(0);
  const addPoints = await hnsPoints(add.pid);
  await h.sim.control.reset({ objects: false });
  const del = await run('DEL', 'probe', ns);
  expect(del.exitCode).toBe(0);
  return { add: addPoints, del: await hnsPoints(del.pid) };
}

async function kill(point: Point, verb: 'ADD' | 'DEL', containerId: string, ns: string): Promise<ProcessOutcome> {
  if (point.kind === 'hns') {
    await h.sim.control.killClient(point.op, { nth: point.nth });
    return run(verb, containerId, ns);
  }
  return run(verb, containerId, ns, point.op);
}

async function followUp(
  kind: FollowUp,
  killedNs: string,
  killed: string,
): Promise<{ delExit: number | '-'; add: { exit: number; tries: number; out: string }; live: string[] }> {
  let delExit: number | '-' = '-';
  if (kind === 'DEL then new ADD') {
    delExit = (await run('DEL', killed, killedNs)).exitCode;
  } else {
    const r = await gc([]);
    // On failure the GC's log (its stderr) is in the diff: the error JSON says what failed, the log says why.
    expect({ gc: r.exitCode, out: r.stdout, ...(r.exitCode !== 0 ? { log: r.stderr } : {}) }).toEqual({
      gc: 0,
      out: '',
    });
  }
  const add = await addLikeRuntime('pod-new', await namespace());
  return { delExit, add, live: ['pod-new'] };
}

describe('crash-point matrix', () => {
  jest.setTimeout(600_000);

  it('ADD killed at every HNS call and state write, then DEL + ADD or GC + ADD: invariants hold', async () => {
    const { add } = await discover();
    const points: Point[] = [...add, ...ADD_STATE_POINTS.map((op) => ({ kind: 'state' as const, op, nth: 1 }))];
    expect(points.some((p) => p.op === 'HcnCreateNetwork')).toBe(true);
    expect(points.some((p) => p.op === 'HcnCreateEndpoint')).toBe(true);
    const failures: string[] = [];
    for (const point of points) {
      for (const race of racesFor(point)) {
        for (const next of FOLLOW_UPS) {
          await freshHost(race);
          const ns = await namespace();
          const k = await kill(point, 'ADD', 'pod-killed', ns);
          const f = await followUp(next, ns, 'pod-killed');
          const c = await invariants(f.live);
          const label = `${point.kind === 'hns' ? `${point.op} #${point.nth}` : `state ${point.op}`}`;
          rows.push(
            `| ADD | ${label} | ${race} | ${next} | ${k.signal === 'SIGKILL' ? 'yes' : `no (${k.exitCode})`} | ${f.delExit} | ${f.add.exit}${f.add.tries > 1 ? ` (after ${f.add.tries} tries)` : ''} | ${c.orphans} | ${c.unreadable} | ${c.ipProblems.length ? c.ipProblems.join('; ') : 'ok'} |`,
          );
          const bad = [
            k.signal !== 'SIGKILL' && 'the crash point was not reached',
            f.delExit !== '-' && f.delExit !== 0 && `DEL exited ${f.delExit}`,
            f.add.exit !== 0 && `the new ADD exited ${f.add.exit} (${f.add.out.trim()})`,
            c.orphans > 0 && `${c.orphans} orphan(s) left (${c.orphanNames.join('; ')})`,
            c.unreadable > 0 && `${c.unreadable} unreadable record(s)`,
            ...c.ipProblems,
            c.networksOnNic !== 1 && `${c.networksOnNic} networks on the NIC`,
          ].filter(Boolean);
          if (bad.length) failures.push(`${label} / ${race} / ${next}: ${bad.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('DEL killed at every HNS call and state write, then DEL again + a new ADD: invariants hold', async () => {
    const { del } = await discover();
    const points: Point[] = [...del, ...DEL_STATE_POINTS.map((op) => ({ kind: 'state' as const, op, nth: 1 }))];
    expect(points.some((p) => p.op === 'HcnDeleteNetwork')).toBe(true);
    const failures: string[] = [];
    for (const point of points) {
      await freshHost('delete-wins');
      const ns = await namespace();
      expect((await run('ADD', 'pod-a', ns)).exitCode).toBe(0);
      const k = await kill(point, 'DEL', 'pod-a', ns);
      const again = await run('DEL', 'pod-a', ns);
      const add = await addLikeRuntime('pod-new', await namespace());
      const c = await invariants(['pod-new']);
      const label = `${point.kind === 'hns' ? `${point.op} #${point.nth}` : `state ${point.op}`}`;
      rows.push(
        `| DEL | ${label} | - | DEL again then new ADD | ${k.signal === 'SIGKILL' ? 'yes' : `no (${k.exitCode})`} | ${again.exitCode} | ${add.exit} | ${c.orphans} | ${c.unreadable} | ${c.ipProblems.length ? c.ipProblems.join('; ') : 'ok'} |`,
      );
      const bad = [
        k.signal !== 'SIGKILL' && 'the crash point was not reached',
        again.exitCode !== 0 && `the retried DEL exited ${again.exitCode}`,
        add.exit !== 0 && `the new ADD exited ${add.exit}`,
        c.orphans > 0 && `${c.orphans} orphan(s) left (${c.orphanNames.join('; ')})`,
        c.unreadable > 0 && `${c.unreadable} unreadable record(s)`,
        ...c.ipProblems,
      ].filter(Boolean);
      if (bad.length) failures.push(`${label}: ${bad.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });
});
